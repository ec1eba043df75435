/**
 * client-go's request metrics for every apiserver client of the agent:
 * rest_client_requests_total{code,method,host} and
 * rest_client_request_duration_seconds{verb,host}. Main thread only.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { REST_CLIENT_LATENCY_BUCKETS } from '../../common/buckets.js';
import type { HttpMethod, RestClientObserver } from './rest-client.js';

export function restClientMetrics(registry: Registry): RestClientObserver {
  const total = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: REST_CLIENT_LATENCY_BUCKETS,
    registers: [registry],
  });
  return {
    request(method: HttpMethod, host: string, code: string, seconds: number) {
      total.inc({ code, method, host });
      duration.observe({ verb: method, host }, seconds);
    },
  };
}
