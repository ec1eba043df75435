import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerMetricBlock } from '../../src/main/metrics/shared-collectors.js';
import { MetricBlock } from '../../src/shared/metric-block.js';

describe('registerMetricBlock', () => {
  it('renders shared counters and cumulative histograms in the Prometheus text format', async () => {
    const block = MetricBlock.create({
      counters: [
        { name: 'ops_total', labels: { op: 'a' } },
        { name: 'ops_total', labels: { op: 'b' } },
      ],
      histograms: [{ name: 'op_seconds', buckets: [0.1, 1], labels: { op: 'a' } }],
    });
    block.inc(block.counterId('ops_total', { op: 'a' }), 3);
    const h = block.histogramId('op_seconds', { op: 'a' });
    block.observe(h, 0.05);
    block.observe(h, 0.5);
    block.observe(h, 5);
    const registry = new Registry();
    registerMetricBlock(registry, block, { ops_total: 'Operations.' });
    const text = await registry.metrics();
    expect(text).toContain('# HELP ops_total Operations.\n# TYPE ops_total counter');
    expect(text).toContain('ops_total{op="a"} 3');
    expect(text).toContain('ops_total{op="b"} 0');
    expect(text).toContain('# TYPE op_seconds histogram');
    expect(text).toContain('op_seconds_bucket{op="a",le="0.1"} 1');
    expect(text).toContain('op_seconds_bucket{op="a",le="1"} 2');
    expect(text).toContain('op_seconds_bucket{op="a",le="+Inf"} 3');
    expect(text).toContain('op_seconds_sum{op="a"} 5.55');
    expect(text).toContain('op_seconds_count{op="a"} 3');
  });
});
