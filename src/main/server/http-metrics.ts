/**
 * The server's request metrics (upstream pkg/kubelet/server/metrics):
 * kubelet_http_requests_total, kubelet_http_requests_duration_seconds and
 * kubelet_http_inflight_requests, labelled {method, path, server_type,
 * long_running}; path and method are bucketed (request-attributes.ts).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { isLongRunning, metricMethod, metricPath } from './request-attributes.js';

export interface HttpMetrics {
  /** Counts the request and marks it in flight; call the returned function when it ends. */
  start(method: string, path: string, serverType: 'readwrite' | 'readonly'): () => void;
}

const LABELS = ['method', 'path', 'server_type', 'long_running'] as const;

export function httpMetrics(registry: Registry): HttpMetrics {
  const total = new Counter({
    name: 'kubelet_http_requests_total',
    help: 'Number of the http requests received since the server started',
    labelNames: LABELS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'kubelet_http_requests_duration_seconds',
    help: 'Duration in seconds to serve http requests',
    labelNames: LABELS,
    registers: [registry],
  });
  const inflight = new Gauge({
    name: 'kubelet_http_inflight_requests',
    help: 'Number of the inflight http requests',
    labelNames: LABELS,
    registers: [registry],
  });
  return {
    start(method, path, serverType) {
      const bucket = metricPath(path);
      const labels = { method: metricMethod(method), path: bucket, server_type: serverType, long_running: String(isLongRunning(bucket)) };
      total.inc(labels);
      inflight.inc(labels);
      const t0 = performance.now();
      return () => {
        inflight.dec(labels);
        duration.observe(labels, (performance.now() - t0) / 1000);
      };
    },
  };
}
