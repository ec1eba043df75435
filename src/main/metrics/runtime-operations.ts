import { Counter, Histogram, type Registry } from 'prom-client';
import type { CriCallObserver } from '../../cri/client.js';
import { RUNTIME_OPERATION_BUCKETS } from '../../common/buckets.js';

/**
 * The upstream runtime operation metrics, labelled by operation_type, fed by
 * the CRI client's per-call observer. Use this observer for CRI clients that
 * live on the main thread; worker threads bump shared-memory counters instead
 * and the main thread folds them into the same names on scrape.
 */
export function runtimeOperationMetrics(registry: Registry): CriCallObserver {
  const total = new Counter({
    name: 'kubelet_runtime_operations_total',
    help: 'Cumulative number of runtime operations by operation type.',
    labelNames: ['operation_type'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'kubelet_runtime_operations_errors_total',
    help: 'Cumulative number of runtime operation errors by operation type.',
    labelNames: ['operation_type'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'kubelet_runtime_operations_duration_seconds',
    help: 'Duration in seconds of runtime operations. Broken down by operation type.',
    labelNames: ['operation_type'],
    buckets: RUNTIME_OPERATION_BUCKETS,
    registers: [registry],
  });
  return (operation, seconds, error) => {
    total.inc({ operation_type: operation });
    duration.observe({ operation_type: operation }, seconds);
    if (error) errors.inc({ operation_type: operation });
  };
}
