import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/common/errors.js';
import { formatDuration, formatDurationNs, isDuration, parseDuration, parseDurationNs } from '../../src/common/duration.js';

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['0s', 0],
    ['-0', 0],
    ['20s', 20_000],
    ['1m0s', 60_000],
    ['2m', 120_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['1h2m3s', 3_723_000],
    ['0.5s', 500],
    ['.5s', 500],
    ['1.s', 1000],
    ['1.1s', 1100],
    ['1.5h', 5_400_000],
    ['300ms', 300],
    ['1500us', 1.5],
    ['1µs', 0.001],
    ['1μs', 0.001],
    ['10ns', 0.00001],
    ['+5s', 5000],
    ['-1.5s', -1500],
    ['1h1h', 7_200_000],
    ['4h0m0s', 14_400_000],
  ])('%s → %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each([
    ['', /empty/],
    ['20', /missing unit/],
    ['1.5', /missing unit/],
    ['20x', /unknown unit "x"/],
    ['1d', /unknown unit "d"/],
    ['s', /number must precede/],
    ['.s', /number must precede/],
    ['1s 2s', /unknown unit "s "/],
    ['-', /empty/],
    ['abc', /malformed|unknown unit|number must precede/],
    ['3000000h', /out of range/],
  ])('rejects %j', (input, reason) => {
    expect(() => parseDuration(input)).toThrow(ConfigError);
    expect(() => parseDuration(input)).toThrow(reason);
    expect(isDuration(input)).toBe(false);
  });

  it('is exact to the nanosecond', () => {
    expect(parseDurationNs('1.000000001s')).toBe(1_000_000_001n);
    expect(parseDurationNs('1.0000000019s')).toBe(1_000_000_001n); // truncates like Go
  });
});

describe('formatDuration (Go Duration.String)', () => {
  it.each([
    [0, '0s'],
    [60_000, '1m0s'],
    [20_000, '20s'],
    [120_000, '2m0s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [5_400_000, '1h30m0s'],
    [1500, '1.5s'],
    [500, '500ms'],
    [1.5, '1.5ms'],
    [0.0015, '1.5µs'],
    [0.000_001, '1ns'],
    [-1500, '-1.5s'],
    [14_400_000, '4h0m0s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through parse', () => {
    for (const text of ['1m0s', '20s', '1h2m3.5s', '250ms', '1.25µs', '7ns']) {
      expect(formatDurationNs(parseDurationNs(text))).toBe(text);
    }
  });
});
