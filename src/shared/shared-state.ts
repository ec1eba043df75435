/**
 * Creates the shared-memory structures the main thread owns and the
 * WorkerInit that hands them to workers. Capacity derives from maxPods.
 */
import { DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS } from '../cri/client.js';
import { ImagePullGate, type ImagePullLimits } from './image-pull-gate.js';
import { MetricBlock } from './metric-block.js';
import { capacityForMaxPods, PodStatusCache } from './pod-status-cache.js';
import { RelistRecordTable } from './relist-records.js';
import { workerMetricSpec } from './worker-metrics.js';

/** Data every worker is started with (piscina workerData, and the long-lived threads). */
export interface WorkerInit {
  runtimeEndpoint: string;
  imageEndpoint?: string;
  runtimeRequestTimeoutMs: number;
  /** The shared pod status cache (PodStatusCache.buffer). */
  podCache: SharedArrayBuffer;
  /** The relist record table (RelistRecordTable.buffer). */
  relistRecords: SharedArrayBuffer;
  /** Worker-side metric counters (MetricBlock.buffer). */
  metrics: SharedArrayBuffer;
  /** Node-wide image pull limits (ImagePullGate.buffer); absent: none. */
  imagePullGate?: SharedArrayBuffer;
  /** Test-only: the fault suite's crash armed for one task type (CrashArm.buffer); absent unless its hook is on. */
  crashArm?: SharedArrayBuffer;
}

export interface SharedStateOptions {
  maxPods: number;
  /** Bytes per pod status slot (default 16 KiB). */
  slotBytes?: number;
  maxContainersPerPod?: number;
  /** Node-wide image pull limits (default: none). */
  imagePulls?: ImagePullLimits;
  /** For the pull QPS bucket's start. Default Date.now(). */
  nowMs?: number;
}

export interface SharedState {
  cache: PodStatusCache;
  records: RelistRecordTable;
  metrics: MetricBlock;
  imagePullGate: ImagePullGate;
  workerInit(runtimeEndpoint: string, options?: { imageEndpoint?: string; timeoutMs?: number }): WorkerInit;
}

export function createSharedState(options: SharedStateOptions): SharedState {
  const capacity = capacityForMaxPods(options.maxPods);
  const cache = PodStatusCache.create({ capacity, slotBytes: options.slotBytes });
  const records = RelistRecordTable.create({ capacity, maxContainersPerPod: options.maxContainersPerPod ?? 64 });
  const metrics = MetricBlock.create(workerMetricSpec());
  const imagePullGate = ImagePullGate.create(options.imagePulls ?? { limit: 0, qps: 0, burst: 0 }, options.nowMs ?? Date.now());
  return {
    cache,
    records,
    metrics,
    imagePullGate,
    workerInit: (runtimeEndpoint, o = {}) => ({
      runtimeEndpoint,
      imageEndpoint: o.imageEndpoint,
      runtimeRequestTimeoutMs: o.timeoutMs ?? DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS,
      podCache: cache.buffer,
      relistRecords: records.buffer,
      metrics: metrics.buffer,
      imagePullGate: imagePullGate.buffer,
    }),
  };
}
