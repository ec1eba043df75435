/**
 * Creates the shared-memory structures the main thread owns and the
 * WorkerInit that hands them to workers. Capacity derives from maxPods.
 */
import { DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS } from '../cri/client.js';
import type { WorkerInit } from './protocol.js';
import { MetricBlock } from './shared/metric-block.js';
import { capacityForMaxPods, PodStatusCache } from './shared/pod-status-cache.js';
import { RelistRecordTable } from './shared/relist-records.js';
import { workerMetricSpec } from './worker-metrics.js';

export interface SharedStateOptions {
  maxPods: number;
  /** Bytes per pod status slot (default 16 KiB). */
  slotBytes?: number;
  maxContainersPerPod?: number;
}

export interface SharedState {
  cache: PodStatusCache;
  records: RelistRecordTable;
  metrics: MetricBlock;
  workerInit(runtimeEndpoint: string, options?: { imageEndpoint?: string; timeoutMs?: number }): WorkerInit;
}

export function createSharedState(options: SharedStateOptions): SharedState {
  const capacity = capacityForMaxPods(options.maxPods);
  const cache = PodStatusCache.create({ capacity, slotBytes: options.slotBytes });
  const records = RelistRecordTable.create({ capacity, maxContainersPerPod: options.maxContainersPerPod ?? 64 });
  const metrics = MetricBlock.create(workerMetricSpec());
  return {
    cache,
    records,
    metrics,
    workerInit: (runtimeEndpoint, o = {}) => ({
      runtimeEndpoint,
      imageEndpoint: o.imageEndpoint,
      runtimeRequestTimeoutMs: o.timeoutMs ?? DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS,
      podCache: cache.buffer,
      relistRecords: records.buffer,
      metrics: metrics.buffer,
    }),
  };
}
