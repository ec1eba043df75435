import { describe, expect, it } from 'vitest';
import { BucketMismatchError, CounterResetError, histogramQuantile, subtractHistogram } from '../../src/common/histogram-math.js';

const b = (pairs: [number, number][]) => pairs.map(([le, count]) => ({ le, count }));
// DefBuckets-like: 10 observations ≤ 0.01, 10 more ≤ 0.1, none above.
const base = b([
  [0.01, 10],
  [0.1, 20],
  [1, 20],
  [Infinity, 20],
]);

describe('histogramQuantile (PromQL semantics)', () => {
  it.each([
    [0.5, 0.01], // rank 10 reaches the first bucket's top exactly
    [0.25, 0.005], // inside the first bucket, lower bound 0
    [0.75, 0.055], // halfway through (0.01, 0.1]
    [0.99, 0.01 + 0.09 * 0.98],
    [1, 0.1],
  ])('q=%s', (q, want) => expect(histogramQuantile(q, base)).toBeCloseTo(want, 12));

  it('a rank in the +Inf bucket returns the highest finite bound', () => {
    expect(
      histogramQuantile(
        0.99,
        b([
          [0.1, 1],
          [Infinity, 10],
        ]),
      ),
    ).toBe(0.1);
  });
  it('is NaN when empty, or without a +Inf bucket', () => {
    expect(
      histogramQuantile(
        0.5,
        b([
          [0.1, 0],
          [Infinity, 0],
        ]),
      ),
    ).toBeNaN();
    expect(
      histogramQuantile(
        0.5,
        b([
          [0.1, 1],
          [1, 2],
        ]),
      ),
    ).toBeNaN();
  });
  it('q outside [0,1] gives ±Inf', () => {
    expect(histogramQuantile(-1, base)).toBe(-Infinity);
    expect(histogramQuantile(2, base)).toBe(Infinity);
  });
  it('makes non-monotonic counts monotonic', () => {
    expect(
      histogramQuantile(
        0.5,
        b([
          [0.1, 4],
          [1, 3],
          [Infinity, 4],
        ]),
      ),
    ).toBeCloseTo(0.05, 12);
  });
});

describe('subtractHistogram', () => {
  const start = {
    buckets: b([
      [0.01, 2],
      [Infinity, 3],
    ]),
    count: 3,
    sum: 0.5,
  };
  it('takes the difference bucket by bucket', () => {
    const end = {
      buckets: b([
        [0.01, 5],
        [Infinity, 9],
      ]),
      count: 9,
      sum: 2,
    };
    expect(subtractHistogram(end, start, 'h')).toEqual({
      buckets: b([
        [0.01, 3],
        [Infinity, 6],
      ]),
      count: 6,
      sum: 1.5,
    });
  });
  it('refuses changed bounds', () => {
    const end = {
      buckets: b([
        [0.02, 5],
        [Infinity, 9],
      ]),
      count: 9,
      sum: 2,
    };
    expect(() => subtractHistogram(end, start, 'h')).toThrow(BucketMismatchError);
    expect(() => subtractHistogram(end, start, 'h')).toThrow(/\[0.01, \+Inf\] → \[0.02, \+Inf\]/);
  });
  it('refuses a count that went down (a restart)', () => {
    const end = {
      buckets: b([
        [0.01, 1],
        [Infinity, 1],
      ]),
      count: 1,
      sum: 0.1,
    };
    expect(() => subtractHistogram(end, start, 'h')).toThrow(CounterResetError);
  });
});
