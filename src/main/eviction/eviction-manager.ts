/**
 * The eviction manager (upstream pkg/kubelet/eviction eviction_manager.go):
 * every monitoring period it measures the node's signals, decides which
 * thresholds are met, reports the pressure conditions (held for
 * evictionPressureTransitionPeriod), reclaims node-level resources (dead
 * containers, then unused images, for disk signals) and, if that is not
 * enough, evicts one pod, in the ranking of the starved resource. Pods over
 * their local ephemeral storage limits are evicted first, all at once.
 *
 * Contract:
 * - One synchronize at a time (runPeriodically). After an eviction the next
 *   synchronize waits until the evicted pods are cleaned up (at most 30 s,
 *   polled each second), as upstream waitForPodsCleanup.
 * - Static, mirror and system-critical pods are never evicted, and always
 *   admitted (upstream IsCriticalPod).
 * - A hard threshold evicts with a grace period of 0 (the pod's containers
 *   get the minimum of 1 s the pod workers allow); a soft one with
 *   evictionMaxPodGracePeriod.
 * - `admit` is upstream's admit handler: under MemoryPressure alone,
 *   BestEffort pods are refused unless they tolerate the memory-pressure
 *   taint; under any other pressure every pod is refused.
 * - The pods' figures (a runtime-wide stats listing: about 3 s of containerd
 *   at 1000 pods) are read only when a decision reads them: a threshold to
 *   reclaim (ranking), an active pod with a local storage limit, or a
 *   threshold on allocatableMemory.available. Upstream reads the whole summary
 *   every pass; the decisions are the same, as no other path reads the pods.
 * Runs on the main thread: the stats reads (off-thread work in the provider),
 * then sorting the active pods, which is O(n log n) with each pod measured once.
 */
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { runPeriodically } from '../../common/periodic.js';
import { getPodQOS } from '../../pod/qos.js';
import type { AdmitResult } from '../admission/admit.js';
import { nodeReference, podReference, type EventRecorder } from '../events/event-recorder.js';
import { PressureTracker, type PressureCondition } from '../node/pressure.js';
import type { EvictionStatsProvider } from './eviction-stats.js';
import { hasStorageLimits, storageLimitViolations } from './local-storage.js';
import { evictionMessage, isCriticalPod, rankFor, statsFuncOf } from './ranking.js';
import {
  isHard,
  mergeThresholds,
  nodeConditions,
  SIGNAL_RESOURCE,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
  thresholdToReclaim,
  type Observations,
  type Signal,
  type Threshold,
} from './thresholds.js';
import { errorMessage } from '../../common/error-message.js';

export const EVICTED_REASON = 'Evicted';
/** Upstream podCleanupTimeout and podCleanupPollFreq. */
export const POD_CLEANUP_TIMEOUT_MS = 30_000;
export const POD_CLEANUP_POLL_MS = 1_000;
/** Upstream's monitoring interval (evictionMonitoringPeriod in newer versions). */
export const DEFAULT_MONITORING_PERIOD_MS = 10_000;

const CONDITION_ORDER: PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

export interface NodeReclaimer {
  /** Upstream ContainerGC.DeleteAllUnusedContainers. */
  deleteAllUnusedContainers(): Promise<void>;
  /** Upstream ImageGC.DeleteUnusedImages. */
  deleteUnusedImages(): Promise<void>;
}

export interface EvictionManagerOptions {
  thresholds: readonly Threshold[];
  stats: EvictionStatsProvider;
  /** The pods that may be evicted (upstream GetActivePods). */
  activePods(): Pod[];
  /** Kills the pod with the Failed/Evicted status (upstream killPodFunc); does not wait for the kill. */
  killPod(pod: Pod, gracePeriodSeconds: number, message: string): void;
  /** The pod's containers are gone and its volumes cleaned (upstream podResourcesAreReclaimed). */
  podCleanedUp(pod: Pod): boolean;
  reclaimer: NodeReclaimer;
  recorder: EventRecorder;
  nodeName: string;
  pressureTransitionPeriodMs: number;
  maxPodGracePeriodSeconds: number;
  /** Enforce emptyDir sizeLimit and ephemeral-storage limits (default true). */
  localStorageCapacityIsolation?: boolean;
  monitoringPeriodMs?: number;
  clock: Clock;
  logger: Logger;
  registry?: Registry;
}

export class EvictionManager {
  private readonly pressure: PressureTracker;
  private conditions: PressureCondition[] = [];
  private firstObservedAt = new Map<Threshold, number>();
  private met: Threshold[] = [];
  private lastObservations: Observations = {};
  private readonly evictions?: Counter<'eviction_signal'>;
  /** A threshold on a signal derived from the pods' figures (allocatableMemory.available) needs them every pass. */
  private readonly podsAlwaysRead: boolean;

  constructor(private readonly options: Readonly<EvictionManagerOptions>) {
    this.pressure = new PressureTracker(options.pressureTransitionPeriodMs, options.clock);
    this.podsAlwaysRead = options.thresholds.some((t) => t.signal === 'allocatableMemory.available');
    if (options.registry) {
      this.evictions = new Counter({
        name: 'kubelet_evictions',
        help: 'Cumulative number of pod evictions by eviction signal',
        labelNames: ['eviction_signal'],
        registers: [options.registry],
      });
    }
  }

  start(signal: AbortSignal): Promise<void> {
    const onError = (err: unknown) => this.options.logger.error({ err: errorMessage(err) }, 'eviction manager: synchronize failed');
    return runPeriodically(
      async () => {
        const evicted = await this.synchronize();
        if (evicted.length) await this.waitForPodsCleanup(evicted, signal);
      },
      {
        periodMs: this.options.monitoringPeriodMs ?? DEFAULT_MONITORING_PERIOD_MS,
        signal,
        clock: this.options.clock,
        immediate: true,
        onError,
      },
    );
  }

  /** The pressure conditions now reported (upstream IsUnderMemoryPressure and friends). */
  underPressure(condition: PressureCondition): boolean {
    return this.conditions.includes(condition);
  }

  /** Upstream Admit. */
  admit(pod: Pod): AdmitResult {
    if (this.conditions.length === 0 || isCriticalPod(pod)) return { admit: true };
    if (this.conditions.length === 1 && this.conditions[0] === 'MemoryPressure') {
      if (getPodQOS(pod) !== 'BestEffort' || toleratesMemoryPressure(pod)) return { admit: true };
    }
    this.options.logger.warn(
      { pod: podRefString(pod), conditions: this.conditions },
      'Failed to admit pod: the node has pressure conditions',
    );
    return { admit: false, reason: EVICTED_REASON, message: `The node had condition: [${this.conditions.join(' ')}]. ` };
  }

  /** One pass of upstream synchronize; returns the pods evicted. */
  async synchronize(): Promise<Pod[]> {
    const { logger, clock } = this.options;
    const active = this.options.activePods();
    const node = await this.options.stats.node();
    const checkLimits = this.options.localStorageCapacityIsolation !== false && active.some(hasStorageLimits);
    let pods = this.podsAlwaysRead || checkLimits ? await this.options.stats.pods(active) : undefined;
    const obs = { ...node.observations, ...pods?.observations };

    let met = thresholdsMet(this.options.thresholds, obs, false);
    if (this.met.length) met = mergeThresholds(met, thresholdsMet(this.met, obs, true));
    const now = clock.now();
    const firstObservedAt = thresholdsFirstObservedAt(met, this.firstObservedAt, now);
    this.pressure.update(new Set(nodeConditions(met)));
    this.conditions = CONDITION_ORDER.filter((c) => this.pressure.under(c));
    const due = thresholdsMetGracePeriod(firstObservedAt, now);
    this.firstObservedAt = firstObservedAt;
    this.met = due;
    const updated = thresholdsUpdatedStats(due, obs, this.lastObservations);
    this.lastObservations = obs;

    const overLimits = checkLimits && pods ? storageLimitViolations(active, statsFuncOf(pods.pods), node.dedicatedImageFs) : [];
    this.reportCritical(overLimits.filter((v) => isCriticalPod(v.pod)).map((v) => v.pod));
    const evictedForStorage = overLimits.filter((v) => !isCriticalPod(v.pod));
    for (const v of evictedForStorage) {
      this.evictPod(v.pod, 0, v.message);
      this.evictions?.inc({ eviction_signal: v.signal });
    }
    if (evictedForStorage.length) return evictedForStorage.map((v) => v.pod);

    const target = thresholdToReclaim(updated);
    if (!target) return [];
    const resource = SIGNAL_RESOURCE[target.signal];
    logger.warn({ resource }, 'eviction manager: attempting to reclaim');
    this.options.recorder.record(
      nodeReference(this.options.nodeName),
      'Warning',
      'EvictionThresholdMet',
      `Attempting to reclaim ${resource}`,
    );
    if (await this.reclaimNodeLevelResources(target.signal, node.dedicatedImageFs, active)) {
      logger.info({ resource }, 'eviction manager: able to reduce pressure without evicting pods');
      return [];
    }
    if (active.length === 0) {
      logger.error('eviction manager: eviction thresholds have been met, but no pods are active to evict');
      return [];
    }
    pods ??= await this.options.stats.pods(active);
    const stats = statsFuncOf(pods.pods);
    const ranked = [...active];
    rankFor(target.signal, node.dedicatedImageFs)(ranked, stats);
    logger.info({ pods: ranked.map(podRefString) }, 'eviction manager: pods ranked for eviction');
    // Upstream walks the ranking and evicts the first pod that is not critical; the critical pods ranked ahead of it are reported.
    const victim = ranked.findIndex((pod) => !isCriticalPod(pod));
    this.reportCritical(victim < 0 ? ranked : ranked.slice(0, victim));
    if (victim < 0) {
      logger.info('eviction manager: unable to evict any pods from the node');
      return [];
    }
    const pod = ranked[victim];
    this.evictPod(pod, isHard(target) ? 0 : this.options.maxPodGracePeriodSeconds, evictionMessage(resource, pod, stats));
    this.evictions?.inc({ eviction_signal: target.signal });
    return [pod];
  }

  /** Upstream reclaimNodeLevelResources: true when, after reclaiming, no threshold is met any more. */
  private async reclaimNodeLevelResources(signal: Signal, dedicatedImageFs: boolean, active: Pod[]): Promise<boolean> {
    const disk = SIGNAL_RESOURCE[signal] === 'ephemeral-storage' || SIGNAL_RESOURCE[signal] === 'inodes';
    // With a dedicated image fs, node fs signals have nothing node-level to reclaim (upstream buildSignalToNodeReclaimFuncs).
    if (!disk || (dedicatedImageFs && signal.startsWith('nodefs.'))) return false;
    for (const step of [() => this.options.reclaimer.deleteAllUnusedContainers(), () => this.options.reclaimer.deleteUnusedImages()]) {
      try {
        await step();
      } catch (err) {
        this.options.logger.warn(
          { err: errorMessage(err), signal },
          'eviction manager: unexpected error when attempting to reduce pressure',
        );
      }
    }
    try {
      const after = await this.options.stats.node();
      const podsAfter = this.podsAlwaysRead ? await this.options.stats.pods(active) : undefined;
      return thresholdsMet(this.options.thresholds, { ...after.observations, ...podsAfter?.observations }, false).length === 0;
    } catch (err) {
      this.options.logger.error({ err: errorMessage(err) }, 'eviction manager: failed to get summary stats after resource reclaim');
      return false;
    }
  }

  /**
   * Upstream logs "cannot evict a critical pod" once per critical pod per
   * monitoring pass (every 10 s): 500 static pods on a full disk make 50
   * error lines a second for one cause. One line per pass names how many and
   * the first few; each pod is at V(4).
   */
  private reportCritical(pods: Pod[]): void {
    if (pods.length === 0) return;
    const names = pods.map(podRefString);
    for (const name of names) this.options.logger.debug({ pod: name }, 'eviction manager: cannot evict a critical pod');
    const shown = names.slice(0, CRITICAL_SHOWN);
    this.options.logger.error(
      { count: names.length, pods: shown, ...(names.length > shown.length && { more: names.length - shown.length }) },
      'eviction manager: cannot evict critical pods',
    );
  }

  /** Upstream evictPod for a pod that is not critical (callers leave those out): the Evicted event and the kill. */
  private evictPod(pod: Pod, gracePeriodSeconds: number, message: string): void {
    this.options.recorder.record(podReference(pod), 'Warning', EVICTED_REASON, message);
    this.options.killPod(pod, gracePeriodSeconds, message);
    this.options.logger.info({ pod: podRefString(pod), message }, 'eviction manager: pod is evicted');
  }

  private async waitForPodsCleanup(pods: Pod[], signal: AbortSignal): Promise<void> {
    const deadline = this.options.clock.now() + POD_CLEANUP_TIMEOUT_MS;
    while (!signal.aborted) {
      try {
        await this.options.clock.sleep(POD_CLEANUP_POLL_MS, signal);
      } catch {
        return;
      }
      if (pods.every((p) => this.options.podCleanedUp(p))) {
        this.options.logger.info({ pods: pods.map(podRefString) }, 'eviction manager: pods successfully cleaned up');
        return;
      }
      if (this.options.clock.now() >= deadline) {
        this.options.logger.warn({ pods: pods.map(podRefString) }, 'eviction manager: timed out waiting for pods to be cleaned up');
        return;
      }
    }
  }
}

/** Critical pods named in the one line per pass that says none of them can be evicted. */
const CRITICAL_SHOWN = 5;

const podRefString = (pod: Pod) => `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name ?? ''}`;

/** Upstream TolerationsTolerateTaint for node.kubernetes.io/memory-pressure:NoSchedule. */
function toleratesMemoryPressure(pod: Pod): boolean {
  return (pod.spec.tolerations ?? []).some((t) => {
    if (t.effect && t.effect !== 'NoSchedule') return false;
    if (t.operator === 'Exists') return !t.key || t.key === 'node.kubernetes.io/memory-pressure';
    return t.key === 'node.kubernetes.io/memory-pressure' && (t.value ?? '') === '';
  });
}
