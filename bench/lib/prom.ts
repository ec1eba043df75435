/** Parses Prometheus text exposition and summarises histograms and counters (bucket quantiles). */
import { round } from './report.js';

const ms = (x: number) => round(x, 1);

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[3]) for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

export interface HistSummary {
  count: number;
  sumS: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

/** Prometheus histogram_quantile: linear interpolation inside the bucket holding the rank. */
export function bucketQuantile(buckets: { le: number; count: number }[], q: number): number {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of sorted) {
    if (b.count >= rank) {
      if (!Number.isFinite(b.le)) return prevLe; // in +Inf: the highest finite bound
      return prevLe + (b.le - prevLe) * ((rank - prevCount) / Math.max(1e-12, b.count - prevCount));
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/** Histograms `name` grouped by one label. Missing metric → {}. */
export function histograms(samples: Sample[], name: string, by: string, only?: string[]): Record<string, HistSummary> {
  const groups = new Map<string, { buckets: { le: number; count: number }[]; count: number; sum: number }>();
  const g = (k: string) => {
    let v = groups.get(k);
    if (!v) groups.set(k, (v = { buckets: [], count: 0, sum: 0 }));
    return v;
  };
  for (const s of samples) {
    const key = s.labels[by] ?? '';
    if (only && !only.includes(key)) continue;
    if (s.name === `${name}_bucket`) g(key).buckets.push({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), count: s.value });
    else if (s.name === `${name}_count`) g(key).count += s.value;
    else if (s.name === `${name}_sum`) g(key).sum += s.value;
  }
  const out: Record<string, HistSummary> = {};
  for (const [k, v] of groups) {
    if (v.count === 0) continue;
    out[k] = {
      count: v.count,
      sumS: round(v.sum, 3),
      meanMs: v.count ? ms((v.sum / v.count) * 1000) : Number.NaN,
      p50Ms: ms(bucketQuantile(v.buckets, 0.5) * 1000),
      p99Ms: ms(bucketQuantile(v.buckets, 0.99) * 1000),
    };
  }
  return out;
}

export function counters(samples: Sample[], name: string, by: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name) out[s.labels[by] ?? ''] = (out[s.labels[by] ?? ''] ?? 0) + s.value;
  return out;
}

// ---------------------------------------------------------------- raw path
