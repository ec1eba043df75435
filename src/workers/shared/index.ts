/**
 * SharedArrayBuffer layouts shared by the main thread and worker threads.
 * Each module exports its own layout constants (H_*, S_*, …) and `bytesFor`;
 * import those from the module itself, since names overlap between layouts.
 */
export { SeqLockArray, seqReadBegin, seqReadConsistent, seqWriteBegin, seqWriteEnd, DEFAULT_MAX_READ_RETRIES } from './seqlock.js';
export { CODEC_VERSION, decodePodStatus, encodePodStatus, encodedPodStatusSize } from './pod-status-codec.js';
export {
  PodStatusCache,
  capacityForMaxPods,
  bytesFor as podStatusCacheBytesFor,
  DEFAULT_SLOT_BYTES,
  SLOT_HEADER_BYTES,
  POD_STATUS_CACHE_VERSION,
  type PodStatusCacheOptions,
} from './pod-status-cache.js';
export { idKey, idKeyInto, keyString } from './id-key.js';
export {
  RelistRecordTable,
  bytesFor as relistRecordsBytesFor,
  DEFAULT_MAX_CONTAINERS_PER_POD,
  DEFAULT_MAX_SANDBOXES_PER_POD,
  RELIST_RECORDS_VERSION,
  type Generation,
  type RecordDiff,
  type RecordInput,
  type RecordState,
  type RelistRecordTableOptions,
  type SlotDiff,
  type SlotRecords,
} from './relist-records.js';
export {
  MetricBlock,
  bytesFor as metricBlockBytesFor,
  METRIC_BLOCK_VERSION,
  type CounterSnapshot,
  type CounterSpec,
  type HistogramSnapshot,
  type HistogramSpec,
  type Labels,
  type MetricBlockSpec,
  type MetricSnapshot,
} from './metric-block.js';
