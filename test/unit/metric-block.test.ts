import { describe, expect, it } from 'vitest';
import { KubeletTsError } from '../../src/common/errors.js';
import { bytesFor, MetricBlock, type MetricBlockSpec } from '../../src/shared/metric-block.js';

const spec: MetricBlockSpec = {
  counters: [
    { name: 'kubelet_pleg_discard_events' },
    { name: 'kubelet_runtime_operations_total', labels: { operation_type: 'list_containers' } },
    { name: 'kubelet_runtime_operations_total', labels: { operation_type: 'container_status' } },
  ],
  histograms: [
    { name: 'kubelet_pleg_relist_duration_seconds', buckets: [0.005, 0.01, 0.1, 1] },
    { name: 'kubelet_runtime_operations_duration_seconds', buckets: [0.01], labels: { operation_type: 'list_containers' } },
  ],
};

describe('MetricBlock', () => {
  it('sizes the buffer from the spec', () => {
    expect(MetricBlock.create(spec).buffer.byteLength).toBe(bytesFor(spec));
  });

  it('counts with resolved ids, label order not mattering', () => {
    const m = MetricBlock.create(spec);
    const discard = m.counterId('kubelet_pleg_discard_events');
    const list = m.counterId('kubelet_runtime_operations_total', { operation_type: 'list_containers' });
    m.inc(discard);
    m.inc(discard, 41);
    m.inc(list, 3);
    const snap = m.snapshot();
    expect(snap.counters).toEqual([
      { name: 'kubelet_pleg_discard_events', labels: {}, value: 42 },
      { name: 'kubelet_runtime_operations_total', labels: { operation_type: 'list_containers' }, value: 3 },
      { name: 'kubelet_runtime_operations_total', labels: { operation_type: 'container_status' }, value: 0 },
    ]);
    expect(() => m.counterId('kubelet_runtime_operations_total', { operation_type: 'nope' })).toThrow(KubeletTsError);
    expect(() => m.counterId('kubelet_runtime_operations_total')).toThrow(/no counter/);
  });

  it('observes into non-cumulative buckets with count and microsecond sum', () => {
    const m = MetricBlock.create(spec);
    const h = m.histogramId('kubelet_pleg_relist_duration_seconds');
    for (const s of [0.001, 0.005, 0.0051, 0.5, 2, 30]) m.observe(h, s);
    const snap = m.snapshot().histograms[0];
    expect(snap.buckets).toEqual([0.005, 0.01, 0.1, 1]);
    expect(snap.counts).toEqual([2, 1, 0, 1, 2]);
    expect(snap.count).toBe(6);
    expect(snap.sum).toBeCloseTo(32.5111, 6);
    expect(() => m.observe(h, NaN)).toThrow(/observed NaN/);
    expect(m.snapshot().histograms[0].count).toBe(6);
    expect(m.snapshot().histograms[1]).toMatchObject({ labels: { operation_type: 'list_containers' }, counts: [0, 0], count: 0, sum: 0 });
  });

  it('attach reads the spec from the buffer and shares the cells', () => {
    const m = MetricBlock.create(spec);
    const w = MetricBlock.attach(m.buffer);
    w.inc(w.counterId('kubelet_pleg_discard_events'), 5);
    w.observe(w.histogramId('kubelet_runtime_operations_duration_seconds', { operation_type: 'list_containers' }), 0.002);
    const snap = m.snapshot();
    expect(snap.counters[0].value).toBe(5);
    expect(snap.histograms[1].counts).toEqual([1, 0]);
    expect(snap.histograms[1].sum).toBe(0.002);
  });

  it('rejects duplicate series, bad buckets and foreign buffers', () => {
    expect(() => MetricBlock.create({ counters: [{ name: 'a' }, { name: 'a', labels: {} }] })).toThrow(/duplicate counter series a/);
    expect(() => MetricBlock.create({ histograms: [{ name: 'h', buckets: [1, 1] }] })).toThrow(/strictly increasing/);
    expect(() => MetricBlock.attach(new SharedArrayBuffer(64))).toThrow(/bad magic/);
  });
});
