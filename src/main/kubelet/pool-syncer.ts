/**
 * The PodSyncer the pod workers call (upstream Kubelet.SyncPod,
 * SyncTerminatingPod, SyncTerminatedPod): it decides on the main thread what
 * only the main thread knows (terminal phase, network readiness, the status
 * to report) and dispatches the CRI work to the worker pool. Backoff state
 * and waiting reasons live here, per pod, and travel with each task.
 */
import type { Logger } from 'pino';
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { SyncBackoffError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { PodStatus as RuntimePodStatus, RuntimePod } from '../../runtime/types.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';
import type { BackoffState } from '../../pod/backoff.js';
import type { NodeInfo, PodEvent, SyncReason } from '../../pod/sync-types.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import type { PodStatusFunc, PodSyncer, SyncContext, SyncPodType } from '../pod-workers/pod-workers.js';
import { generateAPIPodStatus } from '../status/generate-pod-status.js';
import { activeDeadlineEviction } from './active-deadline.js';
import type { StatusManager } from '../status/status-manager.js';
import type { PodManager } from '../podconfig/pod-manager.js';
import type { KubeletMetrics } from './kubelet-metrics.js';
import { Semaphore } from '../../common/semaphore.js';
import { podReference, type EventRecorder } from '../events/event-recorder.js';
import { isStaticPod } from '../podconfig/types.js';
import type { ProbeStatusInputs, ProbeSyncInputs } from '../prober/prober-manager.js';
import type { PodStartMetrics } from '../status/pod-start-metrics.js';
import type { PodVolumeManager } from '../volumes/volume-manager.js';
import type { PodObjectsResolver } from './pod-objects.js';
import type { ServiceEnvSource } from './service-env.js';
import type { PodCgroups } from '../cgroups/pod-cgroups.js';
import { sleepOrWake, Wakeup } from '../../common/wakeup.js';
import { untilAborted } from '../../common/until-aborted.js';

/** A sync waiting for a newer cached status checks the cache at each cacheUpdated() and at least this often. */
export const CACHE_RECHECK_MS = 100;

export interface PoolSyncerOptions {
  runner: TaskRunner;
  cache: PodStatusCache;
  podManager: PodManager;
  statusManager: StatusManager;
  node: NodeInfo;
  clock: Clock;
  logger: Logger;
  /** Network readiness error from the runtime state, if any. */
  networkError(): string | undefined;
  runtimeName?: string;
  metrics?: KubeletMetrics;
  /**
   * Pod sync tasks in flight at once. Keep it below the pool's task capacity
   * so PLEG relist and inspection tasks never queue behind a burst of syncs
   * (e.g. a node boot with hundreds of pods).
   */
  maxConcurrentSyncs?: number;
  /** True when the PLEG could not inspect the pod (its cached status may be missing or stale). */
  cacheUnreliable?(uid: string): boolean;
  /** A sync killed, created or started something (the generic PLEG relists early: GenericPleg.relistSoon). */
  runtimeChanged?(): void;
  /**
   * How long a sync waits for the PLEG to publish a status of the pod newer
   * than the end of its previous sync (upstream GetNewerThan) before its task
   * reads the runtime instead; 0 (default): no wait.
   */
  cacheWaitMs?: number;
  /** The pod left every source and is terminated: its cache slot may go (the PLEG frees it safely). */
  releaseCacheSlot?(uid: string): void;
  /** Where the pod events the sync tasks report go (log at V(3), and the apiserver when connected). */
  recorder: EventRecorder;
  /**
   * A node-level cause of an error (dirFailureCause), if it has one: such a
   * volume failure is logged at V(4) here, the pod workers report it once per cause.
   */
  nodeFailureCause?(err: unknown): string | undefined;
  /** Cluster mode: keeps a static pod's mirror pod in the apiserver (created, or replaced when outdated). */
  syncMirrorPod?(pod: Pod): Promise<void>;
  /** The prober (absent: no probes, every running container is started and ready). */
  probes?: PodProbes;
  /** Pod start-up metrics (kubelet_pod_start_duration_seconds). */
  startMetrics?: Pick<PodStartMetrics, 'statusGenerated' | 'imagePulled'>;
  /** Pod directories and volumes; absent: pods get neither (tests of the sync path alone). */
  volumes?: PodVolumeManager;
  /** Cluster mode: the Secrets/ConfigMaps of env and the imagePullSecrets credentials, resolved per sync. */
  podObjects?: Pick<PodObjectsResolver, 'resolve' | 'forget'>;
  /** Cluster mode: the services whose environment variables the pod's containers get. */
  serviceEnv?: ServiceEnvSource;
  /** cgroupsPerQOS: each pod's cgroup is made before its sync and is its sandbox's cgroup_parent. */
  podCgroups?: Pick<PodCgroups, 'ensureExists' | 'cgroupParent'>;
}

/** What the pod syncer needs of the prober (ProberManager). */
export interface PodProbes {
  statusInputs(pod: Pod, runtime: RuntimePodStatus | undefined): ProbeStatusInputs;
  syncInputs(uid: string): ProbeSyncInputs;
  stopLivenessAndStartup(uid: string): void;
  removePod(uid: string): void;
}

function podRef(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

export class PoolSyncer implements PodSyncer {
  private readonly backoff = new Map<string, BackoffState>();
  private readonly reasons = new Map<string, Record<string, SyncReason>>();
  /**
   * When each pod's last sync finished (upstream podWorkers lastSyncTime): the
   * next sync only trusts a cached status observed after it, otherwise the
   * worker reads the runtime, so a sync never acts on a status older than the
   * previous sync's own changes.
   */
  private readonly lastSyncEnd = new Map<string, number>();
  /** The runtime status read when termination finished, until the pod is terminated (by UID). */
  private readonly terminatedStatus = new Map<string, RuntimePodStatus>();
  /**
   * When each pod gone from every source finished terminating, until a relist
   * that started later has completed: till then the cache may still show it
   * running, from a relist that listed the runtime before the stop.
   */
  private readonly forgottenAt = new Map<string, number>();

  private readonly slots: Semaphore;
  /** Syncs waiting in waitForNewerStatus, woken by cacheUpdated(). */
  private readonly cacheWritten = new Wakeup();

  constructor(private readonly options: Readonly<PoolSyncerOptions>) {
    this.slots = new Semaphore(options.maxConcurrentSyncs ?? 12);
  }

  /** A relist has finished writing the cache (wired to the PLEG): waiting syncs check it again. */
  cacheUpdated(): void {
    this.cacheWritten.fire();
  }

  /**
   * Whether the cached runtime view of a pod this syncer terminated, gone
   * from every source, may predate that termination: no relist that started
   * after it has completed. Housekeeping must then not take the pod for an
   * orphan that still runs (upstream HandlePodCleanups refreshes its runtime
   * cache to now first: ForceUpdateIfOlder).
   */
  cachePredatesTermination(uid: string): boolean {
    const t = this.forgottenAt.get(uid);
    if (t === undefined) return false;
    if (!this.options.cache.isGlobalNewerThan(t)) return true;
    this.forgottenAt.delete(uid);
    return false;
  }

  /** Reads the pod's cached runtime status (zero-copy SAB read). */
  cachedStatus(uid: string): RuntimePodStatus | undefined {
    const slot = this.options.cache.slotOf(uid);
    return slot === undefined ? undefined : this.options.cache.read(slot, uid);
  }

  /**
   * The v1 status from the current cache (or from `runtime`, a status read
   * after the caller's own changes), recorded in the status manager.
   */
  refreshStatus(pod: Pod, podIsTerminal = false, runtime?: RuntimePodStatus): ApiPodStatus {
    const uid = pod.metadata.uid ?? '';
    const previous = this.options.statusManager.getPodStatus(uid);
    const evict = activeDeadlineEviction(pod, previous, this.options.clock.now());
    if (evict && previous?.reason !== evict.reason) this.record(pod, [{ type: 'Normal', reason: evict.reason, message: evict.message }]);
    const status = this.generateStatus(pod, podIsTerminal, runtime, evict);
    this.options.statusManager.setPodStatus(pod, status);
    this.options.startMetrics?.statusGenerated(pod, status, this.options.clock.now());
    return status;
  }

  /**
   * The final status of a pod an internal module evicts (the eviction manager's killPodFunc status): generated
   * from `runtime` (read after the kill) with phase Failed and this reason and message. Not recorded here: the
   * pod worker hands it to syncTerminatingPod as its podStatusFunc.
   */
  evictedStatus(pod: Pod, runtime: RuntimePodStatus | undefined, evict: { reason: string; message: string }): ApiPodStatus {
    return this.generateStatus(pod, true, runtime, evict);
  }

  private generateStatus(
    pod: Pod,
    podIsTerminal: boolean,
    runtime: RuntimePodStatus | undefined,
    evict: { reason: string; message: string } | undefined,
  ): ApiPodStatus {
    const uid = pod.metadata.uid ?? '';
    const now = this.options.clock.now();
    const previous = this.options.statusManager.getPodStatus(uid);
    const current = runtime ?? this.cachedStatus(uid);
    return generateAPIPodStatus(pod, current, {
      ...this.options.probes?.statusInputs(pod, current),
      now,
      evict,
      nodeIP: this.options.node.ip || undefined,
      previous,
      reasonCache: new Map(Object.entries(this.reasons.get(uid) ?? {})),
      podIsTerminal,
      runtimeName: this.options.runtimeName ?? 'containerd',
    });
  }

  private record(pod: Pod, events: PodEvent[]): void {
    for (const e of events) {
      this.options.recorder.record(podReference(pod), e.type, e.reason, e.message);
      if (e.pullMs) this.options.startMetrics?.imagePulled(pod.metadata.uid ?? '', e.pullMs[0], e.pullMs[1]);
    }
  }

  async syncPod(ctx: SyncContext, updateType: SyncPodType, pod: Pod): Promise<{ terminal: boolean }> {
    const started = this.options.clock.now();
    try {
      return await this.syncPodOnce(ctx, pod);
    } finally {
      // upstream records create/update/sync (a kill goes through termination).
      if (updateType !== 'kill')
        this.options.metrics?.podWorkerDuration.observe({ operation_type: updateType }, (this.options.clock.now() - started) / 1000);
    }
  }

  private async syncPodOnce(ctx: SyncContext, pod: Pod): Promise<{ terminal: boolean }> {
    const uid = pod.metadata.uid ?? '';
    const api = this.refreshStatus(pod);
    if (api.phase === 'Succeeded' || api.phase === 'Failed') return { terminal: true };
    const networkError = this.options.networkError();
    if (networkError && !pod.spec.hostNetwork) {
      this.record(pod, [{ type: 'Warning', reason: 'NetworkNotReady', message: `network is not ready: ${networkError}` }]);
      throw new Error(`network is not ready: ${networkError}`);
    }
    if (ctx.signal.aborted) return { terminal: false };
    if (this.options.syncMirrorPod && isStaticPod(pod)) {
      await this.options
        .syncMirrorPod(pod)
        .catch((err: unknown) =>
          this.options.logger.warn(
            { pod: podRef(pod), err: errorMessage(err) },
            'Failed to sync the mirror pod; will retry at the next sync',
          ),
        );
    }
    const volumes = await this.waitForVolumes(ctx, pod);
    // A failed read (not a missing object) fails the sync; the pod worker retries it with backoff.
    const objects = await this.options.podObjects?.resolve(pod);
    const serviceEnv = this.options.serviceEnv?.envFor(pod.metadata.namespace ?? 'default', pod.spec.enableServiceLinks !== false);
    const cgroupParent = await this.ensurePodCgroup(pod);
    const slot = this.options.cache.allocate(uid);
    await this.waitForNewerStatus(uid, slot, ctx.signal);
    const result = await this.slots.run(() =>
      this.options.runner.run({
        type: 'syncPod',
        input: {
          pod,
          slot,
          minTimestamp: this.lastSyncEnd.get(uid) ?? 0,
          cacheUnreliable: this.options.cacheUnreliable?.(uid) ?? false,
          backoff: this.backoff.get(uid) ?? {},
          node: this.options.node,
          ...this.options.probes?.syncInputs(uid),
          ...(this.options.volumes ? { volumes, podDir: this.options.volumes.podDir(uid) } : {}),
          ...(objects ? { objects } : {}),
          ...(serviceEnv ? { serviceEnv } : {}),
          ...(cgroupParent !== undefined && { cgroupParent }),
        },
      }),
    );
    this.lastSyncEnd.set(uid, this.options.clock.now());
    if (result.acted) this.options.runtimeChanged?.();
    this.backoff.set(uid, result.backoff);
    this.reasons.set(uid, result.reasons);
    this.record(pod, result.events);
    // upstream makeMounts: the detail (host paths) is logged, the pod's status and events get the message only.
    for (const h of result.hiddenDetails ?? []) this.options.logger.error({ pod: podRef(pod), podUID: uid, err: h.detail }, h.message);
    if (this.options.logger.isLevelEnabled('debug')) this.options.logger.debug({ pod: podRef(pod), plan: result.plan }, 'SyncPod plan');
    this.refreshStatus(pod);
    if (result.error) throw result.backoffOnly ? new SyncBackoffError(result.error) : new Error(result.error);
    return { terminal: false };
  }

  /**
   * Upstream syncPod's pod cgroup step: the pod's cgroup exists (with its
   * resources) before SyncPod. A failure is a FailedCreatePodContainer event
   * and a sync error, retried by the pod worker.
   */
  private async ensurePodCgroup(pod: Pod): Promise<string | undefined> {
    const cgroups = this.options.podCgroups;
    if (!cgroups) return undefined;
    try {
      await cgroups.ensureExists(pod);
    } catch (err) {
      const message = `unable to ensure pod container exists: ${errorMessage(err)}`;
      this.record(pod, [{ type: 'Warning', reason: 'FailedCreatePodContainer', message }]);
      throw new Error(message, { cause: err });
    }
    return cgroups.cgroupParent(pod);
  }

  /**
   * Upstream GetNewerThan(lastSyncTime), bounded: while the pod's cached
   * status is not newer than the end of its previous sync, wait (holding no
   * sync slot; checked again at each cacheUpdated() and every
   * CACHE_RECHECK_MS) for a relist to publish one, at most cacheWaitMs. A sync that acted asked for an early
   * relist, so the wait is usually that relist's; the task then reads the
   * cache instead of listing and reading the pod from the runtime. Past the
   * wait, or for a pod whose inspection failed, the task reads the runtime.
   */
  private async waitForNewerStatus(uid: string, slot: number, signal: AbortSignal): Promise<void> {
    const { cache, clock } = this.options;
    const wait = this.options.cacheWaitMs ?? 0;
    const min = this.lastSyncEnd.get(uid);
    if (wait <= 0 || min === undefined || this.options.cacheUnreliable?.(uid)) return;
    const deadline = clock.now() + wait;
    while (!cache.isNewerThan(slot, min) && clock.now() < deadline && !signal.aborted) {
      await sleepOrWake(clock, Math.min(CACHE_RECHECK_MS, deadline - clock.now()), this.cacheWritten, signal);
    }
  }

  /**
   * Upstream SyncPod's WaitForAttachAndMount: the pod's volumes are set up
   * before its sandbox. A failure (not a cancellation) is a FailedMount event
   * and a sync error, retried by the pod worker.
   */
  private async waitForVolumes(ctx: SyncContext, pod: Pod) {
    if (!this.options.volumes) return undefined;
    try {
      return await this.options.volumes.waitForAttachAndMount(pod, ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      const message = `Unable to attach or mount volumes: ${errorMessage(err)}`;
      this.record(pod, [{ type: 'Warning', reason: 'FailedMount', message }]);
      const line = this.options.nodeFailureCause?.(err) === undefined ? 'error' : 'debug';
      this.options.logger[line]({ pod: podRef(pod), err: message }, 'Unable to attach or mount volumes for pod; skipping pod');
      throw new Error(message, { cause: err });
    }
  }

  /**
   * Stops the pod's containers with the grace period. When the pod workers
   * abort this call (the grace period was shortened), it returns at once with
   * the abort error, so the next call stops the containers again with the
   * shorter grace period while this task finishes in the background (upstream
   * cancels the context of the running kill).
   */
  async syncTerminatingPod(ctx: SyncContext, pod: Pod, gracePeriodSeconds: number, podStatusFunc?: PodStatusFunc): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    this.options.logger.info({ pod: podRef(pod), gracePeriod: gracePeriodSeconds }, 'Pod is terminating; stopping its containers');
    this.options.probes?.stopLivenessAndStartup(uid);
    const task = this.slots.run(() =>
      this.options.runner.run({
        type: 'terminatePod',
        input: {
          pod,
          slot: this.options.cache.slotOf(uid) ?? -1,
          minTimestamp: this.lastSyncEnd.get(uid) ?? 0,
          cacheUnreliable: this.options.cacheUnreliable?.(uid) ?? false,
          gracePeriodSeconds,
          remove: false,
        },
      }),
    );
    const result = await untilAborted(task, ctx.signal);
    // Once the containers are stopped, readiness probing stops too.
    this.options.probes?.removePod(uid);
    this.record(pod, result.events);
    // The final status comes from the runtime as read after the stop, never from an older cache entry.
    if (podStatusFunc) this.options.statusManager.setPodStatus(pod, podStatusFunc(pod, result.status));
    else this.refreshStatus(pod, true, result.status);
    this.terminatedStatus.set(uid, result.status);
  }

  async syncTerminatedPod(_ctx: SyncContext, pod: Pod): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const stopped = this.terminatedStatus.get(uid);
    this.terminatedStatus.delete(uid);
    const desired = this.options.podManager.get(uid) !== undefined;
    if (!desired) {
      // Gone from every source. Its stopped containers and sandboxes stay until container GC removes them.
      this.options.statusManager.removePodStatus(uid);
      this.options.releaseCacheSlot?.(uid);
      this.options.podObjects?.forget(uid);
      for (const [u, t] of this.forgottenAt) if (this.options.cache.isGlobalNewerThan(t)) this.forgottenAt.delete(u);
      this.forgottenAt.set(uid, this.options.clock.now());
    } else {
      // upstream GetNewerThan(lastSyncTime): a cache entry older than the stop would bring back running containers.
      const slot = this.options.cache.slotOf(uid);
      const fresh = stopped && slot !== undefined && this.options.cache.isNewerThan(slot, stopped.timestamp) ? undefined : stopped;
      this.refreshStatus(pod, true, fresh);
    }
    // upstream SyncTerminatedPod: the volumes of a terminated pod are torn down before it is marked terminated.
    // A teardown that fails (a mount still busy) fails this call; the pod worker retries it.
    await this.options.volumes?.waitForUnmount(uid);
    // upstream TerminatePod: the final status; only now may the apiserver object of a deleted pod go.
    if (desired) this.options.statusManager.terminatePod(this.options.podManager.get(uid) ?? pod);
    this.backoff.delete(uid);
    this.reasons.delete(uid);
    this.lastSyncEnd.delete(uid);
    this.options.logger.info({ pod: podRef(pod), removed: !desired }, 'Pod is terminated');
  }

  async syncTerminatingRuntimePod(_ctx: SyncContext, runningPod: RuntimePod): Promise<void> {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { uid: runningPod.uid, name: runningPod.name, namespace: runningPod.namespace },
      spec: { containers: [] },
    };
    this.options.logger.info(
      { pod: `${runningPod.namespace}/${runningPod.name}`, podUID: runningPod.uid },
      'Killing orphaned pod known only to the runtime',
    );
    await this.options.runner.run({
      type: 'terminatePod',
      input: { pod, slot: -1, minTimestamp: 0, cacheUnreliable: true, gracePeriodSeconds: 1, remove: false },
    });
  }
}
