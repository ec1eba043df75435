/**
 * The main thread's side of the prober (upstream prober.Manager plus the
 * three results managers and the syncLoop's probe channels).
 *
 * - Lifecycle calls go to the prober host (ProberChannel) without waiting:
 *   addPod after admission, stopLivenessAndStartup when termination starts,
 *   removePod once the containers are stopped, cleanupPods from housekeeping.
 * - The host sends result changes per container instance; this keeps a copy
 *   (keyed by runtime container id, so a new instance never inherits an old
 *   result) and turns changes into syncLoop probe events as upstream:
 *   readiness and startup changes sync the pod, liveness only on Failure.
 * - Unhealthy / ProbeWarning events are recorded against the container; runs
 *   that failed or errored are logged at V(1).
 * - `statusInputs` is upstream UpdatePodStatus (started and ready per
 *   container, and a readiness run triggered when a started container has
 *   no success yet); `syncInputs` are the probe results SyncPod acts on.
 * Main thread only.
 */
import type { Logger } from 'pino';
import type { Container, Pod } from '../../api/pod.js';
import { v } from '../../common/logger.js';
import type { PodStatus as RuntimePodStatus } from '../../runtime/types.js';
import type { ProberBatch } from '../../prober/prober-host.js';
import { probeSpecOf, type ProbeContainer, type ProbePod, type ProbeType, type ResultValue } from '../../prober/probe-types.js';
import { isRestartableInitContainer } from '../../pod/init-containers.js';
import { findLatestContainerStatus } from '../../pod/restart-policy.js';
import { podReference, type EventRecorder } from '../events/event-recorder.js';
import type { ProbeResult } from '../sync-loop/sync-loop-queue.js';
import type { ProberChannel } from './prober-channel.js';

export interface ProberManagerOptions {
  /** Builds the channel to the prober host; batches go to `onBatch`. */
  channel(onBatch: (batch: ProberBatch) => void): ProberChannel;
  queue: { pushProbe(result: ProbeResult): void };
  recorder: EventRecorder;
  podOf(uid: string): Pod | undefined;
  logger: Logger;
}

export interface ProbeStatusInputs {
  readiness: Map<string, boolean>;
  startup: Map<string, boolean>;
}

export interface ProbeSyncInputs {
  livenessFailed: string[];
  startupFailed: string[];
  startupSucceeded: string[];
}

const hasProbe = (c: Container) => !!(c.livenessProbe || c.readinessProbe || c.startupProbe);

/** The containers and sidecars of `pod` that have probes, as the host needs them; undefined when there are none. */
export function toProbePod(pod: Pod): ProbePod | undefined {
  const pick = (c: Container, sidecar: boolean): ProbeContainer => ({
    name: c.name,
    sidecar,
    ...(c.livenessProbe && { livenessProbe: c.livenessProbe }),
    ...(c.readinessProbe && { readinessProbe: c.readinessProbe }),
    ...(c.startupProbe && { startupProbe: c.startupProbe }),
    ...(c.ports && { ports: c.ports }),
    ...(c.env && { env: c.env.filter((e) => e.value !== undefined) }),
  });
  const containers = [
    ...(pod.spec.containers ?? []).filter(hasProbe).map((c) => pick(c, false)),
    ...(pod.spec.initContainers ?? []).filter((c) => isRestartableInitContainer(c) && hasProbe(c)).map((c) => pick(c, true)),
  ];
  if (containers.length === 0) return undefined;
  return {
    uid: pod.metadata.uid ?? '',
    name: pod.metadata.name ?? '',
    namespace: pod.metadata.namespace ?? '',
    restartPolicy: pod.spec.restartPolicy ?? 'Always',
    ...(pod.spec.hostNetwork && { hostNetwork: true }),
    ...(pod.metadata.deletionTimestamp && { deletionTimestamp: pod.metadata.deletionTimestamp }),
    containers,
  };
}

const QUEUE_NAME: Record<ProbeType, ProbeResult['probe']> = { Liveness: 'liveness', Readiness: 'readiness', Startup: 'startup' };

export class ProberManager {
  /**
   * Opened by the first pod with a probe: a node without probes never starts
   * the prober thread (an isolate costs ~15-30 MiB resident).
   */
  private channel: ProberChannel | undefined;
  /** Result per container id and probe type (the host's results managers, mirrored). */
  private readonly results = new Map<string, Map<ProbeType, ResultValue>>();
  /** Container ids with results, per pod. */
  private readonly idsByPod = new Map<string, Set<string>>();
  /** Probe types with a live worker, per pod (upstream getWorker). */
  private readonly active = new Map<string, Map<string, Set<ProbeType>>>();

  constructor(private readonly options: Readonly<ProberManagerOptions>) {}

  private open(): ProberChannel {
    return (this.channel ??= this.options.channel((batch) => this.onBatch(batch)));
  }

  addPod(pod: Pod): void {
    const p = toProbePod(pod);
    if (!p || this.active.has(p.uid)) return;
    const byContainer = new Map<string, Set<ProbeType>>();
    for (const c of p.containers) {
      const types = new Set<ProbeType>((['Startup', 'Readiness', 'Liveness'] as const).filter((t) => probeSpecOf(c, t)));
      byContainer.set(c.name, types);
    }
    this.active.set(p.uid, byContainer);
    this.open().addPod(p);
  }

  stopLivenessAndStartup(uid: string): void {
    const pod = this.active.get(uid);
    if (!pod) return;
    for (const types of pod.values()) {
      types.delete('Liveness');
      types.delete('Startup');
    }
    this.channel?.stopLivenessAndStartup(uid);
  }

  removePod(uid: string): void {
    if (!this.active.delete(uid)) return;
    this.channel?.removePod(uid);
  }

  /** Upstream CleanupPods: stop the probes of every pod not in `desired`. */
  cleanupPods(desired: Iterable<string>): void {
    const keep = new Set(desired);
    let changed = false;
    for (const uid of [...this.active.keys()]) {
      if (keep.has(uid)) continue;
      this.active.delete(uid);
      changed = true;
    }
    if (changed) this.channel?.cleanupPods([...keep]);
  }

  get podCount(): number {
    return this.active.size;
  }

  metricsText(): Promise<string> {
    return this.channel?.metricsText() ?? Promise.resolve('');
  }

  close(): Promise<void> {
    return this.channel?.close() ?? Promise.resolve();
  }

  private workerExists(uid: string, container: string, type: ProbeType): boolean {
    return this.active.get(uid)?.get(container)?.has(type) ?? false;
  }

  result(containerId: string, type: ProbeType): ResultValue | undefined {
    return this.results.get(containerId)?.get(type);
  }

  /** Upstream UpdatePodStatus for the running containers and sidecars of `pod`. */
  statusInputs(pod: Pod, runtime: RuntimePodStatus | undefined): ProbeStatusInputs {
    const out: ProbeStatusInputs = { readiness: new Map(), startup: new Map() };
    if (!runtime) return out;
    const uid = pod.metadata.uid ?? '';
    const probed = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? []).filter(isRestartableInitContainer)];
    for (const c of probed) {
      if (!c.startupProbe && !c.readinessProbe) continue;
      const latest = findLatestContainerStatus(runtime, c.name);
      if (!latest || latest.state !== 'running') continue;
      const startup = this.result(latest.id, 'Startup');
      const started = startup !== undefined ? startup === 'Success' : !this.workerExists(uid, c.name, 'Startup');
      out.startup.set(c.name, started);
      if (!started || !c.readinessProbe) continue;
      if (this.result(latest.id, 'Readiness') === 'Success') {
        out.readiness.set(c.name, true);
        continue;
      }
      const exists = this.workerExists(uid, c.name, 'Readiness');
      out.readiness.set(c.name, !exists); // no worker: ready, as upstream
      if (exists) this.channel?.trigger(uid, c.name, 'Readiness');
    }
    return out;
  }

  /** The container instances of the pod SyncPod must restart (liveness/startup failed) or may count as started. */
  syncInputs(uid: string): ProbeSyncInputs {
    const out: ProbeSyncInputs = { livenessFailed: [], startupFailed: [], startupSucceeded: [] };
    for (const id of this.idsByPod.get(uid) ?? []) {
      const r = this.results.get(id);
      if (!r) continue;
      if (r.get('Liveness') === 'Failure') out.livenessFailed.push(id);
      const s = r.get('Startup');
      if (s === 'Failure') out.startupFailed.push(id);
      else if (s === 'Success') out.startupSucceeded.push(id);
    }
    return out;
  }

  private onBatch(batch: ProberBatch): void {
    for (const ch of batch.results) {
      if (ch.result === undefined) {
        const r = this.results.get(ch.containerId);
        r?.delete(ch.probeType);
        if (r?.size === 0) {
          this.results.delete(ch.containerId);
          const ids = this.idsByPod.get(ch.podUid);
          ids?.delete(ch.containerId);
          if (ids?.size === 0) this.idsByPod.delete(ch.podUid);
        }
        continue;
      }
      let r = this.results.get(ch.containerId);
      if (!r) {
        this.results.set(ch.containerId, (r = new Map<ProbeType, ResultValue>()));
        let ids = this.idsByPod.get(ch.podUid);
        if (!ids) this.idsByPod.set(ch.podUid, (ids = new Set()));
        ids.add(ch.containerId);
      }
      r.set(ch.probeType, ch.result);
      // upstream syncLoopIteration: liveness updates sync the pod only on Failure.
      if (ch.probeType === 'Liveness' && ch.result !== 'Failure') continue;
      this.options.queue.pushProbe({
        podUid: ch.podUid,
        container: ch.container,
        probe: QUEUE_NAME[ch.probeType],
        success: ch.result === 'Success',
      });
    }
    for (const e of batch.events) {
      const pod = this.options.podOf(e.podUid) ?? { metadata: { name: e.podName, namespace: e.namespace, uid: e.podUid }, spec: {} };
      this.options.recorder.record(podReference(pod as Pod, { name: e.container, init: e.init }), e.type, e.reason, e.message);
    }
    for (const l of batch.logs) {
      v(this.options.logger, 1).info(
        { probeType: l.probeType, pod: l.pod, containerName: l.container, probeResult: l.outcome, output: l.output, err: l.error },
        l.error ? 'Probe errored' : 'Probe failed',
      );
    }
  }
}
