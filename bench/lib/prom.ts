/**
 * Benchmark summaries of scraped /metrics: histograms and counters grouped by
 * one label. Parsing and quantiles are the project's (src/common/prom-text.ts,
 * src/common/histogram-math.ts), shared with kubelet-ts-compare.
 */
import { histogramQuantile } from '../../src/common/histogram-math.js';
import { histogramSeries, parsePromText, type Sample } from '../../src/common/prom-text.js';
import { round } from './report.js';

export type { Sample };

const ms = (x: number) => round(x, 1);

/** The samples of a Prometheus text exposition (throws PromParseError on a bad line). */
export function parseProm(text: string): Sample[] {
  return parsePromText(text).samples;
}

export interface HistSummary {
  count: number;
  sumS: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

/** Histograms `name` grouped by one label (series without it group under ''). Missing metric → {}. */
export function histograms(samples: Sample[], name: string, by: string, only?: string[]): Record<string, HistSummary> {
  const groups = new Map<string, { buckets: Map<number, number>; count: number; sum: number }>();
  for (const { labels, histogram } of histogramSeries(samples, name)) {
    const key = labels[by] ?? '';
    if (only && !only.includes(key)) continue;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { buckets: new Map(), count: 0, sum: 0 }));
    for (const b of histogram.buckets) g.buckets.set(b.le, (g.buckets.get(b.le) ?? 0) + b.count);
    g.count += histogram.count;
    g.sum += histogram.sum;
  }
  const out: Record<string, HistSummary> = {};
  for (const [k, v] of groups) {
    if (v.count === 0) continue;
    const buckets = [...v.buckets].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
    out[k] = {
      count: v.count,
      sumS: round(v.sum, 3),
      meanMs: ms((v.sum / v.count) * 1000),
      p50Ms: ms(histogramQuantile(0.5, buckets) * 1000),
      p99Ms: ms(histogramQuantile(0.99, buckets) * 1000),
    };
  }
  return out;
}

export function counters(samples: Sample[], name: string, by: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name) out[s.labels[by] ?? ''] = (out[s.labels[by] ?? ''] ?? 0) + s.value;
  return out;
}
