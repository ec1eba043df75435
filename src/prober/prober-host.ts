/**
 * The prober host (upstream prober.Manager's worker side): the probe workers
 * of every pod, their results per container instance, and the probe metrics.
 * It runs on the prober thread (prober-thread-entry.ts) or, in inline mode,
 * on the main thread; the main thread talks to it only through the calls
 * below and receives result *changes* and events in batches (`emit`), so a
 * node full of steadily passing probes costs the main thread nothing.
 *
 * Pod status comes from the shared pod status cache (`statusOf`): the newest
 * instance of each container, its state and start time, and the pod IP (the
 * node IP for host-network pods).
 *
 * Calls: addPod (after admission), stopLivenessAndStartup (termination
 * starts), removePod (termination done), cleanupPods (housekeeping), trigger
 * (a readiness result is wanted now). Unknown pods are ignored.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import type { Probe } from '../api/pod.js';
import type { Clock } from '../common/clock.js';
import type { PodStatus } from '../runtime/types.js';
import { findLatestContainerStatus } from '../pod/restart-policy.js';
import { ProbeWorker, type ContainerView, type WorkerHost } from './probe-worker.js';
import { probeSpecOf, type ProbeEvent, type ProbePod, type ProbeResultChange, type ProbeType, type ResultValue } from './probe-types.js';
import type { ProbeAttempt, ProbeTarget } from './run-probe.js';

export interface ProberBatch {
  results: ProbeResultChange[];
  events: ProbeEvent[];
  /** Probe runs that errored or failed, for the main thread's log (upstream logs them at V(1)). */
  logs: { pod: string; container: string; probeType: ProbeType; outcome: string; output: string; error?: string }[];
}

export interface ProberHostOptions {
  clock: Clock;
  random?: () => number;
  /** The node's IP, probed for host-network pods. */
  nodeIP: string;
  statusOf(uid: string): PodStatus | undefined;
  probe(type: ProbeType, spec: Probe, target: ProbeTarget): Promise<ProbeAttempt>;
  /** Receives batches of changes; called from a microtask after they happen. */
  emit(batch: ProberBatch): void;
  /** Where prober_probe_total / prober_probe_duration_seconds live (served on /metrics/probes). */
  registry?: Registry;
}

const RESULT_LABEL: Record<string, string> = { Success: 'successful', Failure: 'failed', Unknown: 'unknown' };

export class ProberHost implements WorkerHost {
  readonly clock: Clock;
  readonly startedAt: number;
  readonly registry: Registry;
  private readonly workers = new Map<string, ProbeWorker>();
  private readonly byPod = new Map<string, Map<string, ProbeWorker>>();
  private readonly pods = new Map<string, ProbePod>();
  /** Results by container id, then probe type (upstream: one results manager per type). */
  private readonly results = new Map<string, Map<ProbeType, ResultValue>>();
  private readonly probeTotal: Counter;
  private readonly probeDuration: Histogram;
  private pending: ProberBatch = { results: [], events: [], logs: [] };
  private flushQueued = false;

  constructor(private readonly options: Readonly<ProberHostOptions>) {
    this.clock = options.clock;
    this.startedAt = options.clock.now();
    this.registry = options.registry ?? new Registry();
    this.probeTotal = new Counter({
      name: 'prober_probe_total',
      help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
      labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
      registers: [this.registry],
    });
    this.probeDuration = new Histogram({
      name: 'prober_probe_duration_seconds',
      help: 'Duration in seconds for a probe response.',
      labelNames: ['probe_type', 'container', 'pod', 'namespace'],
      registers: [this.registry],
    });
  }

  random(): number {
    return (this.options.random ?? Math.random)();
  }

  get workerCount(): number {
    return this.workers.size;
  }

  /** Upstream AddPod: a worker per probe of every container and sidecar; a duplicate stops the rest (as upstream). */
  addPod(pod: ProbePod): void {
    for (const c of pod.containers) {
      for (const type of ['Startup', 'Readiness', 'Liveness'] as const) {
        const spec = probeSpecOf(c, type);
        if (!spec) continue;
        const key = `${pod.uid}/${c.name}/${type}`;
        if (this.workers.has(key)) return;
        const w = new ProbeWorker(this, pod, c, type, spec);
        this.workers.set(key, w);
        let mine = this.byPod.get(pod.uid);
        if (!mine) this.byPod.set(pod.uid, (mine = new Map<string, ProbeWorker>()));
        mine.set(key, w);
        this.pods.set(pod.uid, pod);
        w.start();
      }
    }
  }

  stopLivenessAndStartup(uid: string): void {
    for (const w of this.byPod.get(uid)?.values() ?? []) if (w.type !== 'Readiness') w.stop();
  }

  removePod(uid: string): void {
    for (const w of [...(this.byPod.get(uid)?.values() ?? [])]) w.stop();
  }

  /** Stops the workers of every pod not in `desired`. */
  cleanupPods(desired: readonly string[]): void {
    const keep = new Set(desired);
    for (const uid of [...this.byPod.keys()]) if (!keep.has(uid)) this.removePod(uid);
  }

  trigger(uid: string, container: string, type: ProbeType): void {
    this.workers.get(`${uid}/${container}/${type}`)?.trigger();
  }

  /** Stops every worker (shutdown). */
  close(): void {
    for (const w of [...this.workers.values()]) w.stop();
  }

  // ---- WorkerHost --------------------------------------------------------

  view(pod: ProbePod, container: string): { podIP: string; container?: ContainerView } | undefined {
    const status = this.options.statusOf(pod.uid);
    if (!status) return undefined;
    const podIP = pod.hostNetwork ? this.options.nodeIP : (status.ips[0] ?? '');
    const c = findLatestContainerStatus(status, container);
    if (!c) return { podIP };
    return {
      podIP,
      container: {
        id: c.id,
        running: c.state === 'running',
        exited: c.state === 'exited',
        startedAtMs: c.startedAt > 0n ? Number(c.startedAt / 1_000_000n) : 0,
      },
    };
  }

  started(podUid: string, container: string, containerId: string): boolean {
    if (!this.workers.has(`${podUid}/${container}/Startup`)) return true;
    return this.results.get(containerId)?.get('Startup') === 'Success';
  }

  setResult(w: ProbeWorker, containerId: string, result: ResultValue): void {
    let byType = this.results.get(containerId);
    if (!byType) this.results.set(containerId, (byType = new Map<ProbeType, ResultValue>()));
    if (byType.get(w.type) === result) return;
    byType.set(w.type, result);
    this.push({ podUid: w.pod.uid, container: w.container.name, containerId, probeType: w.type, result });
  }

  removeResult(w: ProbeWorker, containerId: string): void {
    const byType = this.results.get(containerId);
    if (!byType?.delete(w.type)) return;
    if (byType.size === 0) this.results.delete(containerId);
    this.push({ podUid: w.pod.uid, container: w.container.name, containerId, probeType: w.type });
  }

  probe(type: ProbeType, spec: Probe, target: ProbeTarget): Promise<ProbeAttempt> {
    return this.options.probe(type, spec, target);
  }

  observed(w: ProbeWorker, attempt: ProbeAttempt, seconds: number): void {
    const { pod, container, type } = w;
    const result = attempt.result ?? 'Unknown';
    this.probeTotal.inc({
      probe_type: type,
      result: RESULT_LABEL[result],
      container: container.name,
      pod: pod.name,
      namespace: pod.namespace,
      pod_uid: pod.uid,
    });
    // Upstream observes the duration of successful and unknown runs only.
    if (result !== 'Failure') {
      this.probeDuration.observe({ probe_type: type, container: container.name, pod: pod.name, namespace: pod.namespace }, seconds);
    }
    if (attempt.event) {
      this.pending.events.push({
        podUid: pod.uid,
        podName: pod.name,
        namespace: pod.namespace,
        container: container.name,
        init: container.sidecar,
        type: 'Warning',
        reason: attempt.event.reason,
        message: attempt.event.message,
      });
    }
    if (attempt.outcome !== 'success') {
      this.pending.logs.push({
        pod: `${pod.namespace}/${pod.name}`,
        container: container.name,
        probeType: type,
        outcome: attempt.outcome,
        output: attempt.output,
        ...(attempt.error ? { error: attempt.error } : {}),
      });
    }
    if (attempt.event || attempt.outcome !== 'success') this.scheduleFlush();
  }

  exited(w: ProbeWorker): void {
    if (this.workers.get(w.key) === w) this.workers.delete(w.key);
    const mine = this.byPod.get(w.pod.uid);
    if (mine?.get(w.key) === w) mine.delete(w.key);
    if (mine && mine.size === 0) {
      this.byPod.delete(w.pod.uid);
      this.pods.delete(w.pod.uid);
    }
    const { pod, container, type } = w;
    const base = { probe_type: type, container: container.name, pod: pod.name, namespace: pod.namespace };
    for (const result of Object.values(RESULT_LABEL)) this.probeTotal.remove({ ...base, result, pod_uid: pod.uid });
    this.probeDuration.remove(base);
  }

  // ---- batching ----------------------------------------------------------

  private push(change: ProbeResultChange): void {
    this.pending.results.push(change);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      const batch = this.pending;
      this.pending = { results: [], events: [], logs: [] };
      if (batch.results.length || batch.events.length || batch.logs.length) this.options.emit(batch);
    });
  }
}
