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
  /** kubelet-ts's own: where a relist's time goes (see RELIST_PHASES). */
  relistPhase: Histogram<'phase'>;
  /** kubelet-ts's own: pods the last relist could not record (see RelistSummary.skipped). */
  skippedPods: Gauge;
}

/**
 * Phases of one relist, for kubelet_ts_pleg_relist_phase_seconds: `list`
 * (the two runtime lists, received and decoded, in a worker), `records`
 * (grouping and the record table write), `diff`, `inspect` (inspections of
 * pods with events), `dispatch` (the hop of the relist's report from the
 * worker's relist loop to the main thread: part of the relist's duration only
 * when the main thread finishes the relist, i.e. it has events or held
 * reinspections) and `main` (main-thread work on the report).
 */
const RELIST_PHASES = ['list', 'records', 'diff', 'inspect', 'dispatch', 'main'] as const;

/** 100 µs … 1 s: a steady relist's phases are well under DEF_BUCKETS' first bound. */
export const RELIST_PHASE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

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
    skippedPods: new Gauge({
      name: 'kubelet_ts_pleg_skipped_pods',
      help: 'Pods the last PLEG relist could not record and left out (their containers are not watched); the log says why.',
      registers,
    }),
    relistPhase: new Histogram({
      name: 'kubelet_ts_pleg_relist_phase_seconds',
      help: `Time of each phase of a PLEG relist (${RELIST_PHASES.join(', ')}), in seconds.`,
      labelNames: ['phase'],
      buckets: RELIST_PHASE_BUCKETS,
      registers,
    }),
  };
}

/** The evented PLEG's metrics (upstream names; registered only with --pleg=evented, as upstream behind its feature gate). */
export interface EventedPlegMetrics {
  connectionErrors: Counter;
  connectionSuccesses: Counter;
  connectionLatency: Histogram;
}

export function eventedPlegMetrics(registry: Registry): EventedPlegMetrics {
  const registers = [registry];
  return {
    connectionErrors: new Counter({
      name: 'kubelet_evented_pleg_connection_error_count',
      help: 'The number of errors encountered during the establishment of streaming connection with the CRI runtime.',
      registers,
    }),
    connectionSuccesses: new Counter({
      name: 'kubelet_evented_pleg_connection_success_count',
      help: 'The number of times a streaming client was obtained to receive CRI Events.',
      registers,
    }),
    connectionLatency: new Histogram({
      name: 'kubelet_evented_pleg_connection_latency_seconds',
      help: 'The latency of streaming connection with the CRI runtime, measured in seconds.',
      buckets: DEF_BUCKETS,
      registers,
    }),
  };
}
