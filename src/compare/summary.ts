/**
 * Turns the scrapes of each source into the numbers kubelet-ts-compare shows:
 * PLEG relist duration and interval, discard events, last-seen age, the
 * evented PLEG metrics when present, and runtime operations by type. With a
 * start scrape the numbers are over the window (end − start); without one
 * they are cumulative since the kubelet started.
 *
 * Metric names and buckets are upstream's (pkg/kubelet/metrics), which the Go
 * kubelet v1.20.2 and kubelet-ts share.
 */
import {
  BucketMismatchError,
  CounterResetError,
  formatBounds,
  histogramQuantile,
  sameBounds,
  subtractHistogram,
} from '../common/histogram-math.js';
import { histogramSeries, parsePromText, type Bucket, type HistogramData, type Sample } from '../common/prom-text.js';
import { MetricMissingError, NotAKubeletError } from './errors.js';
import type { SourceScrapes } from './snapshot.js';

export const METRICS = {
  relistDuration: 'kubelet_pleg_relist_duration_seconds',
  relistInterval: 'kubelet_pleg_relist_interval_seconds',
  discardEvents: 'kubelet_pleg_discard_events',
  lastSeen: 'kubelet_pleg_last_seen_seconds',
  eventedErrors: 'kubelet_evented_pleg_connection_error_count',
  eventedSuccess: 'kubelet_evented_pleg_connection_success_count',
  eventedLatency: 'kubelet_evented_pleg_connection_latency_seconds',
  runtimeOps: 'kubelet_runtime_operations_duration_seconds',
  runtimeOpErrors: 'kubelet_runtime_operations_errors_total',
} as const;

/** The PLEG metrics every source must have (unless allowMissing). */
const REQUIRED = [METRICS.relistDuration, METRICS.relistInterval, METRICS.discardEvents, METRICS.lastSeen] as const;

export interface HistStats {
  count: number;
  sumS: number;
  /** NaN when count is 0. */
  meanS: number;
  p50S: number;
  p90S: number;
  p99S: number;
  /** Cumulative buckets over the window. */
  buckets: Bucket[];
}

export interface SourceSummary {
  name: string;
  origin: string;
  /** Window length; null when the numbers are cumulative since the kubelet started. */
  windowS: number | null;
  endTime: string;
  relistDuration: HistStats | null;
  relistInterval: HistStats | null;
  discardEvents: number | null;
  /** End scrape time − kubelet_pleg_last_seen_seconds. */
  lastSeenAgeS: number | null;
  evented: { connectionErrors: number | null; connectionSuccess: number | null; connectionLatency: HistStats | null } | null;
  /** Every operation type the source has a series for, also those with no call in the window. */
  runtimeOps: Record<string, HistStats>;
  runtimeOpErrors: Record<string, number>;
  /** The relist duration count in each scrape, for checking against the kubelet's own /metrics. */
  relistCount: { start: number | null; end: number | null };
}

export interface Comparison {
  sources: SourceSummary[];
  /** Things a reader must know: metrics absent on some sources (with allowMissing). */
  notes: string[];
}

export function histStats(h: HistogramData): HistStats {
  return {
    count: h.count,
    sumS: h.sum,
    meanS: h.count > 0 ? h.sum / h.count : Number.NaN,
    p50S: histogramQuantile(0.5, h.buckets),
    p90S: histogramQuantile(0.9, h.buckets),
    p99S: histogramQuantile(0.99, h.buckets),
    buckets: h.buckets,
  };
}

const EMPTY: HistogramData = { buckets: [], count: 0, sum: 0 };

/** Adds series with the same bounds (a metric split by labels the table does not show). */
function mergeSeries(series: HistogramData[], what: string): HistogramData | undefined {
  if (series.length === 0) return undefined;
  const [first, ...rest] = series;
  const out: HistogramData = { buckets: first.buckets.map((b) => ({ ...b })), count: first.count, sum: first.sum };
  for (const s of rest) {
    if (!sameBounds(s.buckets, out.buckets)) throw new BucketMismatchError(`${what}: series with different buckets in one scrape`);
    s.buckets.forEach((b, i) => (out.buckets[i].count += b.count));
    out.count += s.count;
    out.sum += s.sum;
  }
  return out;
}

class SourceView {
  readonly start: Sample[] | undefined;
  readonly end: Sample[];
  constructor(readonly src: SourceScrapes) {
    this.end = parsePromText(src.end.text).samples;
    this.start = src.start ? parsePromText(src.start.text).samples : undefined;
  }

  private where(metric: string) {
    return `${metric} on ${this.src.name} (${this.src.origin})`;
  }

  has(metric: string): boolean {
    return this.end.some((s) => s.name === metric || s.name === `${metric}_count`);
  }

  /** The histogram over the window, split by `by` ('' groups everything). A series born in the window starts from zero. */
  histogram(metric: string, by = ''): Map<string, HistogramData> {
    const group = (samples: Sample[]) => {
      const m = new Map<string, HistogramData[]>();
      for (const { labels, histogram } of histogramSeries(samples, metric)) {
        const k = by ? (labels[by] ?? '') : '';
        m.set(k, [...(m.get(k) ?? []), histogram]);
      }
      return new Map([...m].map(([k, v]) => [k, mergeSeries(v, this.where(metric))!]));
    };
    const end = group(this.end);
    if (!this.start) return end;
    const start = group(this.start);
    const out = new Map<string, HistogramData>();
    for (const [k, h] of end) {
      const s = start.get(k) ?? { ...EMPTY, buckets: h.buckets.map((b) => ({ le: b.le, count: 0 })) };
      out.set(k, subtractHistogram(h, s, `${this.where(metric)}${k ? `{${by}="${k}"}` : ''}`));
    }
    return out;
  }

  /** A counter over the window, split by `by`. */
  counter(metric: string, by = ''): Map<string, number> {
    const sum = (samples: Sample[]) => {
      const m = new Map<string, number>();
      for (const s of samples) {
        if (s.name !== metric) continue;
        const k = by ? (s.labels[by] ?? '') : '';
        m.set(k, (m.get(k) ?? 0) + s.value);
      }
      return m;
    };
    const end = sum(this.end);
    if (!this.start) return end;
    const start = sum(this.start);
    const out = new Map<string, number>();
    for (const [k, v] of end) {
      const d = v - (start.get(k) ?? 0);
      if (d < 0)
        throw new CounterResetError(
          `${this.where(metric)}: went down from ${start.get(k)} to ${v}; the kubelet restarted during the window`,
        );
      out.set(k, d);
    }
    return out;
  }

  gauge(metric: string): number | undefined {
    return this.end.find((s) => s.name === metric)?.value;
  }
}

function requireKubelet(v: SourceView): void {
  if (v.end.some((s) => s.name.startsWith('kubelet_'))) return;
  const names = [...new Set(v.end.map((s) => s.name))];
  throw new NotAKubeletError(
    `${v.src.name} (${v.src.origin}) is not a kubelet's /metrics: it has no kubelet_* metric ` +
      (names.length ? `(${names.length} others, e.g. ${names.slice(0, 3).join(', ')})` : '(it has no samples at all)') +
      '. Point it at the kubelet port (10250 for the Go kubelet, --port for kubelet-ts) and path /metrics.',
  );
}

function checkPresence(views: SourceView[], allowMissing: boolean, notes: string[]): void {
  for (const metric of REQUIRED) {
    const missing = views.filter((v) => !v.has(metric));
    if (missing.length === 0) continue;
    const present = views.filter((v) => v.has(metric)).map((v) => v.src.name);
    const msg =
      `${metric} is missing on ${missing.map((v) => `${v.src.name} (${v.src.origin})`).join(', ')}` +
      (present.length ? ` but present on ${present.join(', ')}` : '');
    if (!allowMissing) throw new MetricMissingError(`${msg}. Is it a kubelet with a PLEG? Pass --allow-missing to show the rest anyway.`);
    notes.push(`${msg}; shown as "—".`);
  }
}

/** Throws BucketMismatchError when sources disagree on the bounds of one histogram. */
function checkBounds(what: string, entries: { name: string; h: HistStats | null | undefined }[]): void {
  const have = entries.filter((e): e is { name: string; h: HistStats } => !!e.h && e.h.buckets.length > 0);
  for (const e of have.slice(1)) {
    if (!sameBounds(e.h.buckets, have[0].h.buckets)) {
      throw new BucketMismatchError(
        `${what}: the buckets differ between sources, so their quantiles cannot be compared: ` +
          `${have[0].name} has [${formatBounds(have[0].h.buckets)}], ${e.name} has [${formatBounds(e.h.buckets)}]`,
      );
    }
  }
}

function summarize(v: SourceView): SourceSummary {
  const one = (m: string) => v.histogram(m).get('');
  const relist = one(METRICS.relistDuration);
  const interval = one(METRICS.relistInterval);
  const eventedPresent = [METRICS.eventedErrors, METRICS.eventedSuccess, METRICS.eventedLatency].some((m) => v.has(m));
  const lastSeen = v.gauge(METRICS.lastSeen);
  const ops = v.histogram(METRICS.runtimeOps, 'operation_type');
  const startCount = v.start ? histogramSeries(v.start, METRICS.relistDuration).reduce((a, s) => a + s.histogram.count, 0) : null;
  const endCount = v.has(METRICS.relistDuration)
    ? histogramSeries(v.end, METRICS.relistDuration).reduce((a, s) => a + s.histogram.count, 0)
    : null;
  return {
    name: v.src.name,
    origin: v.src.origin,
    windowS: v.src.start ? (v.src.end.timeMs - v.src.start.timeMs) / 1000 : null,
    endTime: new Date(v.src.end.timeMs).toISOString(),
    relistDuration: relist ? histStats(relist) : null,
    relistInterval: interval ? histStats(interval) : null,
    discardEvents: v.has(METRICS.discardEvents) ? (v.counter(METRICS.discardEvents).get('') ?? 0) : null,
    lastSeenAgeS: lastSeen === undefined ? null : v.src.end.timeMs / 1000 - lastSeen,
    evented: eventedPresent
      ? {
          connectionErrors: v.has(METRICS.eventedErrors) ? (v.counter(METRICS.eventedErrors).get('') ?? 0) : null,
          connectionSuccess: v.has(METRICS.eventedSuccess) ? (v.counter(METRICS.eventedSuccess).get('') ?? 0) : null,
          connectionLatency: v.has(METRICS.eventedLatency) ? histStats(one(METRICS.eventedLatency)!) : null,
        }
      : null,
    runtimeOps: Object.fromEntries([...ops].map(([k, h]) => [k, histStats(h)])),
    runtimeOpErrors: Object.fromEntries([...v.counter(METRICS.runtimeOpErrors, 'operation_type')].filter(([, n]) => n > 0)),
    relistCount: { start: startCount, end: endCount },
  };
}

/** Summarizes every source and checks they can be compared. */
export function compareSources(scrapes: readonly SourceScrapes[], opts: { allowMissing?: boolean } = {}): Comparison {
  const views = scrapes.map((s) => new SourceView(s));
  views.forEach(requireKubelet);
  const notes: string[] = [];
  checkPresence(views, opts.allowMissing ?? false, notes);
  const sources = views.map(summarize);
  checkBounds(
    METRICS.relistDuration,
    sources.map((s) => ({ name: s.name, h: s.relistDuration })),
  );
  checkBounds(
    METRICS.relistInterval,
    sources.map((s) => ({ name: s.name, h: s.relistInterval })),
  );
  checkBounds(
    METRICS.eventedLatency,
    sources.map((s) => ({ name: s.name, h: s.evented?.connectionLatency })),
  );
  const ops = new Set(sources.flatMap((s) => Object.keys(s.runtimeOps)));
  for (const op of ops)
    checkBounds(
      `${METRICS.runtimeOps}{operation_type="${op}"}`,
      sources.map((s) => ({ name: s.name, h: s.runtimeOps[op] })),
    );
  const windows = sources.map((s) => s.windowS);
  if (windows.some((w) => w === null) && windows.some((w) => w !== null)) {
    notes.push('some sources are over a window and others cumulative since their start: compare means and quantiles, not counts.');
  }
  return { sources, notes };
}
