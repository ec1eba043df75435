/** Histogram buckets as upstream component-base/metrics defines them. */

/** prometheus.DefBuckets */
export const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** prometheus.ExponentialBuckets(start, factor, count) */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

/** kubelet_runtime_operations_duration_seconds: ExponentialBuckets(.005, 2.5, 14). */
export const RUNTIME_OPERATION_BUCKETS = exponentialBuckets(0.005, 2.5, 14);

/** Pod startup SLI buckets (kubelet_pod_start_sli_duration_seconds and friends). */
export const POD_STARTUP_BUCKETS = [
  0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600,
];

/** rest_client_request_duration_seconds (client-go): 0.005 … 60 s. */
export const REST_CLIENT_LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
