/** kubelet-ts's relist phase histogram over a window of the peer benchmark (absent on the Go kubelet). */
import { histogramQuantile, subtractHistogram } from '../../src/common/histogram-math.js';
import { histogramSeries, parsePromText } from '../../src/common/prom-text.js';
import { round } from './report.js';

/** Per phase: relists in the window, mean and p99 (upstream buckets, interpolated) in ms. */
export type RelistPhases = Record<string, { count: number; meanMs: number; p99Ms: number }>;

const PHASE_METRIC = 'kubelet_ts_pleg_relist_phase_seconds';

/** Window difference of kubelet-ts's relist phase histogram (absent on the Go kubelet). */
export function relistPhases(startText: string, endText: string): RelistPhases | undefined {
  const series = (text: string) => histogramSeries(parsePromText(text).samples, PHASE_METRIC);
  const start = new Map(series(startText).map((s) => [s.labels.phase, s.histogram]));
  const out: RelistPhases = {};
  for (const s of series(endText)) {
    const phase = s.labels.phase ?? '';
    const before = start.get(phase);
    const h = before ? subtractHistogram(s.histogram, before, `${PHASE_METRIC}{phase="${phase}"}`) : s.histogram;
    if (h.count === 0) continue;
    out[phase] = {
      count: h.count,
      meanMs: round((h.sum / h.count) * 1000, 3),
      p99Ms: round(histogramQuantile(0.99, h.buckets) * 1000, 3),
    };
  }
  return Object.keys(out).length ? out : undefined;
}
