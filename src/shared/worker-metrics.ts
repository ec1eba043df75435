/**
 * The metrics that worker threads (and main-thread CRI calls) record into the
 * shared MetricBlock. The main thread's prom-client collectors read the block
 * on scrape (src/main/metrics/shared-collectors.ts). Names and buckets are
 * upstream's.
 */
import type { CriCallObserver } from '../cri/client.js';
import { IMAGE_OPERATIONS, RUNTIME_OPERATIONS, type OperationType } from '../cri/operations.js';
import { RUNTIME_OPERATION_BUCKETS } from '../common/buckets.js';
import { type MetricBlock, type MetricBlockSpec } from './metric-block.js';

export const RUNTIME_OPS_TOTAL = 'kubelet_runtime_operations_total';
export const RUNTIME_OPS_ERRORS = 'kubelet_runtime_operations_errors_total';
export const RUNTIME_OPS_DURATION = 'kubelet_runtime_operations_duration_seconds';

const OPERATIONS: OperationType[] = [...Object.values(RUNTIME_OPERATIONS), ...Object.values(IMAGE_OPERATIONS)];

export function workerMetricSpec(): MetricBlockSpec {
  return {
    counters: OPERATIONS.flatMap((op) => [
      { name: RUNTIME_OPS_TOTAL, labels: { operation_type: op } },
      { name: RUNTIME_OPS_ERRORS, labels: { operation_type: op } },
    ]),
    histograms: OPERATIONS.map((op) => ({
      name: RUNTIME_OPS_DURATION,
      buckets: RUNTIME_OPERATION_BUCKETS,
      labels: { operation_type: op },
    })),
  };
}

/** A CRI call observer that records into the shared block; ids are resolved once here. */
export function sharedRuntimeObserver(block: MetricBlock): CriCallObserver {
  const ids = new Map<OperationType, { total: number; errors: number; duration: number }>();
  for (const op of OPERATIONS) {
    ids.set(op, {
      total: block.counterId(RUNTIME_OPS_TOTAL, { operation_type: op }),
      errors: block.counterId(RUNTIME_OPS_ERRORS, { operation_type: op }),
      duration: block.histogramId(RUNTIME_OPS_DURATION, { operation_type: op }),
    });
  }
  return (operation, seconds, error) => {
    const id = ids.get(operation);
    if (!id) return;
    block.inc(id.total);
    block.observe(id.duration, seconds);
    if (error) block.inc(id.errors);
  };
}
