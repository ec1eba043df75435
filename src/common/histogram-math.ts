/**
 * Arithmetic on scraped Prometheus histograms: the difference of two scrapes
 * of one series (a window), and quantiles as PromQL `histogram_quantile`
 * computes them (linear interpolation inside the bucket that holds the rank;
 * the first bucket's lower bound is 0; a rank in the +Inf bucket returns the
 * highest finite bound).
 */
import type { Bucket, HistogramData } from './prom-text.js';
import { KubeletTsError } from './errors.js';

/** Two scrapes (or two sources) of a histogram do not have the same bucket bounds. */
export class BucketMismatchError extends KubeletTsError {
  override readonly code = 'KTS_ERR_BUCKET_MISMATCH';
}

/** A cumulative count went down between two scrapes: the process restarted in between. */
export class CounterResetError extends KubeletTsError {
  override readonly code = 'KTS_ERR_COUNTER_RESET';
}

/** Bucket bounds as text, for messages: "0.005, 0.01, …, +Inf". */
export function formatBounds(buckets: readonly Bucket[]): string {
  return buckets.map((b) => (Number.isFinite(b.le) ? String(b.le) : '+Inf')).join(', ');
}

export function sameBounds(a: readonly Bucket[], b: readonly Bucket[]): boolean {
  return a.length === b.length && a.every((x, i) => x.le === b[i].le);
}

/**
 * end − start, bucket by bucket. `what` names the series in errors.
 * Throws BucketMismatchError when the bounds differ and CounterResetError when
 * any cumulative value went down.
 */
export function subtractHistogram(end: HistogramData, start: HistogramData, what: string): HistogramData {
  if (!sameBounds(end.buckets, start.buckets)) {
    throw new BucketMismatchError(
      `${what}: the bucket bounds changed between the two scrapes ([${formatBounds(start.buckets)}] → [${formatBounds(end.buckets)}]); ` +
        'the process was restarted with other buckets during the window',
    );
  }
  if (end.count < start.count || end.buckets.some((b, i) => b.count < start.buckets[i].count)) {
    throw new CounterResetError(
      `${what}: the count went down from ${start.count} to ${end.count} between the two scrapes; ` +
        'the process restarted during the window, so the difference means nothing: scrape again',
    );
  }
  return {
    buckets: end.buckets.map((b, i) => ({ le: b.le, count: b.count - start.buckets[i].count })),
    count: end.count - start.count,
    sum: end.sum - start.sum,
  };
}

/** PromQL histogram_quantile(q) over cumulative buckets sorted by le. NaN when empty or without a +Inf bucket. */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number {
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  if (buckets.length < 2 || buckets.at(-1)!.le !== Infinity) return Number.NaN;
  // Non-monotonic cumulative counts (a torn scrape) are made monotonic first, as Prometheus does.
  const counts: number[] = [];
  for (const b of buckets) counts.push(Math.max(b.count, counts.at(-1) ?? 0));
  const total = counts.at(-1)!;
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let i = counts.findIndex((c) => c >= rank);
  if (i === buckets.length - 1) return buckets[buckets.length - 2].le;
  if (i === 0 && buckets[0].le <= 0) return buckets[0].le;
  if (i < 0) i = buckets.length - 1;
  const start = i === 0 ? 0 : buckets[i - 1].le;
  const below = i === 0 ? 0 : counts[i - 1];
  const inBucket = counts[i] - below;
  return start + (buckets[i].le - start) * ((rank - below) / inBucket);
}
