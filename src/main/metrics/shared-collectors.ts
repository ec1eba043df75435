/**
 * Exports a shared MetricBlock through a prom-client Registry. Workers bump
 * the block with Atomics; on scrape, each family below reads one snapshot and
 * renders it in the Prometheus text format (counters as-is, histograms as
 * cumulative _bucket/_sum/_count), so no worker round trip is needed.
 */
import type { Registry } from 'prom-client';
import type { MetricBlock, MetricSnapshot } from '../../shared/metric-block.js';

interface Value {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** Registers a family whose values are computed on each scrape. */
function registerFamily(registry: Registry, name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]): void {
  const family = {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: async () => ({ name, help, type, aggregator: 'sum' as const, values: values() }),
  };
  registry.registerMetric(family as never);
}

/** Registers one family per metric name in the block. `help` maps names to help texts. */
export function registerMetricBlock(registry: Registry, block: MetricBlock, help: Record<string, string>): void {
  let cached: { at: number; snap: MetricSnapshot } | undefined;
  // One scrape renders every family; share a single snapshot across them.
  const snapshot = (): MetricSnapshot => {
    const now = performance.now();
    if (!cached || now - cached.at > 50) cached = { at: now, snap: block.snapshot() };
    return cached.snap;
  };
  const counterNames = new Set((block.spec.counters ?? []).map((c) => c.name));
  const histogramNames = new Set((block.spec.histograms ?? []).map((h) => h.name));

  for (const name of counterNames) {
    registerFamily(registry, name, help[name] ?? name, 'counter', () =>
      snapshot()
        .counters.filter((c) => c.name === name)
        .map((c) => ({ labels: { ...c.labels }, value: c.value })),
    );
  }

  for (const name of histogramNames) {
    registerFamily(registry, name, help[name] ?? name, 'histogram', () => {
      const values: Value[] = [];
      for (const h of snapshot().histograms) {
        if (h.name !== name) continue;
        let cumulative = 0;
        h.buckets.forEach((le, i) => {
          cumulative += h.counts[i];
          values.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le }, value: cumulative });
        });
        cumulative += h.counts[h.buckets.length];
        values.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le: '+Inf' }, value: cumulative });
        values.push({ metricName: `${name}_sum`, labels: { ...h.labels }, value: h.sum });
        values.push({ metricName: `${name}_count`, labels: { ...h.labels }, value: h.count });
      }
      return values;
    });
  }
}
