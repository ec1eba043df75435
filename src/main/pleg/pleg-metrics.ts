import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DEF_BUCKETS } from '../../common/buckets.js';

/** PLEG metrics, upstream names and buckets (pkg/kubelet/metrics). Main thread only. */
export interface PlegMetrics {
  relistDuration: Histogram;
  relistInterval: Histogram;
  discardEvents: Counter;
  lastSeen: Gauge;
  runningPods: Gauge;
  runningContainers: Gauge<'container_state'>;
}

export function plegMetrics(registry: Registry): PlegMetrics {
  const registers = [registry];
  return {
    relistDuration: new Histogram({
      name: 'kubelet_pleg_relist_duration_seconds',
      help: 'Duration in seconds for relisting pods in PLEG.',
      buckets: DEF_BUCKETS,
      registers,
    }),
    relistInterval: new Histogram({
      name: 'kubelet_pleg_relist_interval_seconds',
      help: 'Interval in seconds between relisting in PLEG.',
      buckets: DEF_BUCKETS,
      registers,
    }),
    discardEvents: new Counter({ name: 'kubelet_pleg_discard_events', help: 'The number of discard events in PLEG.', registers }),
    lastSeen: new Gauge({
      name: 'kubelet_pleg_last_seen_seconds',
      help: 'Timestamp in seconds when PLEG was last seen active.',
      registers,
    }),
    runningPods: new Gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox', registers }),
    runningContainers: new Gauge({
      name: 'kubelet_running_containers',
      help: 'Number of containers currently running',
      labelNames: ['container_state'],
      registers,
    }),
  };
}
