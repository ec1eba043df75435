import { Histogram, type Registry } from 'prom-client';
import { DEF_BUCKETS } from '../../common/buckets.js';

/** Pod worker metrics, upstream names and buckets (pkg/kubelet/metrics). Main thread only. */
export interface KubeletMetrics {
  /** kubelet_pod_worker_duration_seconds{operation_type="create"|"update"|"sync"} */
  podWorkerDuration: Histogram<'operation_type'>;
}

export function kubeletMetrics(registry: Registry): KubeletMetrics {
  return {
    podWorkerDuration: new Histogram({
      name: 'kubelet_pod_worker_duration_seconds',
      help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync',
      labelNames: ['operation_type'],
      buckets: DEF_BUCKETS,
      registers: [registry],
    }),
  };
}
