/**
 * The one message protocol between the main thread and the prober thread.
 * Commands go main → prober, fire-and-forget except `metrics` (answered by
 * id); the main thread ends the thread with Worker.terminate(). The prober sends batches of result changes and events, and answers.
 */
import type { ProberBatch } from './prober-host.js';
import type { ProbePod, ProbeType } from './probe-types.js';

/** workerData of the prober thread. */
export interface ProberInit {
  runtimeEndpoint: string;
  runtimeRequestTimeoutMs: number;
  /** The shared pod status cache (PodStatusCache.buffer), read-only here. */
  podCache: SharedArrayBuffer;
  nodeIP: string;
}

export type ProberCommand =
  | { type: 'addPod'; pod: ProbePod }
  | { type: 'stopLivenessAndStartup'; uid: string }
  | { type: 'removePod'; uid: string }
  | { type: 'cleanupPods'; uids: string[] }
  | { type: 'trigger'; uid: string; container: string; probeType: ProbeType }
  | { type: 'metrics'; id: number };

export type ProberMessage = { type: 'batch'; batch: ProberBatch } | { type: 'metrics'; id: number; text: string } | { type: 'closed' };
