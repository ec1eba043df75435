import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { histogramSeries, parsePromText, parsePromValue, PromParseError } from '../../src/common/prom-text.js';

const fixture = (f: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'metrics', f), 'utf8');

describe('parsePromValue', () => {
  it.each([
    ['+Inf', Infinity],
    ['-Inf', -Infinity],
    ['1.795396109e+09', 1.795396109e9],
    ['0.033038913999999996', 0.033038913999999996],
    ['-3', -3],
    ['.5', 0.5],
  ])('%s', (text, want) => expect(parsePromValue(text)).toBe(want));
  it('NaN and garbage are NaN', () => {
    expect(parsePromValue('NaN')).toBeNaN();
    expect(parsePromValue('12abc')).toBeNaN();
  });
});

describe('parsePromText', () => {
  it('reads samples, labels with escapes, timestamps, HELP and TYPE', () => {
    const { samples, families } = parsePromText(
      [
        '# HELP x_total A \\\\ help\\nline',
        '# TYPE x_total counter',
        'x_total{path="C:\\\\DIR",msg="say \\"hi\\"\\n",empty=""} 3 1395066363000',
        '# a plain comment',
        '',
        'y{a="1",} +Inf',
        'z   -2.5e-3',
      ].join('\n'),
    );
    expect(samples).toEqual([
      { name: 'x_total', labels: { path: 'C:\\DIR', msg: 'say "hi"\n', empty: '' }, value: 3, timestampMs: 1395066363000 },
      { name: 'y', labels: { a: '1' }, value: Infinity },
      { name: 'z', labels: {}, value: -0.0025 },
    ]);
    expect(families.get('x_total')).toEqual({ name: 'x_total', type: 'counter', help: 'A \\ help\nline' });
  });

  it.each([
    ['<html><body>Unauthorized</body></html>', /line 1: expected a metric name/],
    ['ok', /line 1: expected a value/],
    ['a 1\nb{x=1} 2', /line 2: expected ="…" after label x/],
    ['a{x="1" 2', /line 1: expected ',' or '}' after label x/],
    ['a one', /line 1: expected a number as the value/],
    ['# TYPE a histo', /line 1: expected a metric type/],
    ['a 1 2 3', /line 1: expected a value \(and optional timestamp\)/],
  ])('rejects %j', (text, message) => {
    expect(() => parsePromText(text)).toThrow(PromParseError);
    expect(() => parsePromText(text)).toThrow(message);
  });

  it('parses a real Go kubelet v1.20.2 scrape', () => {
    const { samples, families } = parsePromText(fixture('go-kubelet-1.20.2-b.txt'));
    expect(families.get('kubelet_pleg_relist_duration_seconds')?.type).toBe('histogram');
    expect(samples.find((s) => s.name === 'kubernetes_build_info')?.labels.git_version).toBe('v1.20.2');
  });
});

describe('histogramSeries', () => {
  it('keeps every label set of a labelled histogram apart (the npm parser merged them)', () => {
    const text = [
      '# TYPE h histogram',
      'h_bucket{op="a",le="1"} 1',
      'h_bucket{op="a",le="+Inf"} 2',
      'h_sum{op="a"} 3',
      'h_count{op="a"} 2',
      'h_bucket{op="b",le="+Inf"} 7',
      'h_bucket{op="b",le="1"} 5',
      'h_sum{op="b"} 9',
      'h_count{op="b"} 7',
    ].join('\n');
    expect(histogramSeries(parsePromText(text).samples, 'h')).toEqual([
      {
        labels: { op: 'a' },
        histogram: {
          buckets: [
            { le: 1, count: 1 },
            { le: Infinity, count: 2 },
          ],
          count: 2,
          sum: 3,
        },
      },
      {
        labels: { op: 'b' },
        histogram: {
          buckets: [
            { le: 1, count: 5 },
            { le: Infinity, count: 7 },
          ],
          count: 7,
          sum: 9,
        },
      },
    ]);
  });

  it('reads the runtime operations of a Go kubelet scrape by operation_type', () => {
    const series = histogramSeries(
      parsePromText(fixture('go-kubelet-1.20.2-b.txt')).samples,
      'kubelet_runtime_operations_duration_seconds',
    );
    const byOp = Object.fromEntries(series.map((s) => [s.labels.operation_type, s.histogram]));
    expect(byOp.list_podsandbox.count).toBe(36);
    expect(byOp.list_podsandbox.buckets).toHaveLength(15); // ExponentialBuckets(.005, 2.5, 14) + +Inf
    expect(byOp.list_podsandbox.buckets.at(-1)).toEqual({ le: Infinity, count: 36 });
  });
});
