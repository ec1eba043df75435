import { Histogram, type Registry } from 'prom-client';

/** kubelet_pod_status_sync_duration_seconds, upstream name and buckets. */
export function podStatusSyncDuration(registry: Registry): Histogram {
  return new Histogram({
    name: 'kubelet_pod_status_sync_duration_seconds',
    help: 'Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status until the API is successfully updated for that pod, even if multiple intervening changes to pod status occur.',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 20, 30, 45, 60],
    registers: [registry],
  });
}
