/**
 * `kubelet-ts-compare --svg`: the relist duration histogram of every source
 * over the window, as the share of relists at or below each bucket bound
 * (the cumulative histogram, normalised, so sources with different relist
 * counts share one axis). Points sit on the bucket bounds; the segments
 * between them are the linear interpolation histogram_quantile assumes.
 */
import { renderChartSvg } from './svg-chart.js';
import type { Comparison } from './summary.js';
import { METRICS } from './summary.js';

export function comparisonChartSvg(c: Comparison): string {
  const span = (w: number | null) => (w === null ? 'since start' : `${w.toFixed(0)} s window`);
  return renderChartSvg({
    title: `${METRICS.relistDuration}: share of relists ≤ bucket bound`,
    subtitle: c.sources.map((s) => `${s.name}: ${s.relistDuration?.count ?? 0} relists, ${span(s.windowS)}`).join('; '),
    xLabel: 'relist duration, bucket upper bound (ms, log scale)',
    yLabel: 'share of relists ≤ bound',
    xType: 'log',
    yDomain: [0, 1],
    series: c.sources.map((s) => {
      const h = s.relistDuration;
      const total = h?.count ?? 0;
      return {
        name: s.name,
        points: total > 0 ? h!.buckets.filter((b) => Number.isFinite(b.le)).map((b) => ({ x: b.le * 1000, y: b.count / total })) : [],
      };
    }),
  });
}
