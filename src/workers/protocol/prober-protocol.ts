/**
 * What the main thread and the prober thread share: the thread's init
 * (workerData) and the API it serves behind comlink. Lifecycle calls are
 * fire-and-forget on the main thread's side (comlink keeps their order);
 * result batches come back through the callback given to attach().
 */
import type { ProberBatch } from '../../prober/prober-host.js';
import type { ProbePod, ProbeType } from '../../prober/probe-types.js';

/** workerData of the prober thread. */
export interface ProberInit {
  runtimeEndpoint: string;
  runtimeRequestTimeoutMs: number;
  /** The shared pod status cache (PodStatusCache.buffer), read-only here. */
  podCache: SharedArrayBuffer;
  nodeIP: string;
}

/** The prober thread's API (comlink). */
export interface ProberThreadApi {
  /** Where result batches go (a comlink proxy); called once, before any pod is added. */
  attach(onBatch: (batch: ProberBatch) => void): void;
  addPod(pod: ProbePod): void;
  stopLivenessAndStartup(uid: string): void;
  removePod(uid: string): void;
  cleanupPods(uids: string[]): void;
  trigger(uid: string, container: string, probeType: ProbeType): void;
  /** prober_probe_total and prober_probe_duration_seconds in the text exposition format. */
  metricsText(): Promise<string>;
}
