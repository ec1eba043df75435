import { describe, expect, it } from 'vitest';
import { formatBytes, formatMilli, parseQuantity, compareQuantities } from '../../src/api/quantity.js';

// Expected strings follow apimachinery's Quantity.String() (CanonicalizeBytes):
// - BinarySI: a value in (-1024, 1024) is printed as DecimalSI; otherwise the
//   largest power of 1024 that divides it exactly picks the suffix (none if 1024 ∤ v).
// - DecimalSI: trailing zeros are removed in groups of three (exponent a multiple
//   of 3), giving m / "" / k / M / G / T / P / E.
describe('formatBytes: BinarySI Quantity.String()', () => {
  it.each([
    [0n, '0'],
    [512n, '512'],
    [999n, '999'],
    // Below 1024 a BinarySI quantity prints as DecimalSI, so 1000 bytes is "1k".
    [1000n, '1k'],
    [-1000n, '-1k'],
    [1023n, '1023'],
    [1024n, '1Ki'],
    [-1024n, '-1Ki'],
    [1536n, '1536'],
    // 2000 is not a multiple of 1024 and is not below 1024: no suffix, no decimal "2k".
    [2000n, '2000'],
    [3n * 1024n * 1024n, '3Mi'],
    [1073741824n, '1Gi'],
    [8589934592n, '8Gi'],
    [25274150912n, '24681788Ki'],
    [1500000000n, '1500000000'],
    [107374182400n, '100Gi'],
    [1024n ** 4n * 3n, '3Ti'],
    [1024n ** 6n, '1Ei'],
  ])('%s bytes → %s', (bytes, expected) => {
    expect(formatBytes(bytes)).toBe(expected);
    // And the string means the same amount.
    expect(compareQuantities(parseQuantity(expected), { raw: '', format: 'BinarySI', num: bytes, den: 1n })).toBe(0);
  });
});

describe('formatMilli: DecimalSI Quantity.String() of a milli value', () => {
  it.each([
    [0n, '0'],
    [10n, '10m'],
    [100n, '100m'],
    [1000n, '1'],
    [1100n, '1100m'],
    [1500n, '1500m'],
    [1900n, '1900m'],
    [2000n, '2'],
    [4000n, '4'],
    [2500000n, '2500'],
    [1000000n, '1k'],
    [3000000000n, '3M'],
    [-500n, '-500m'],
  ])('%sm → %s', (milli, expected) => {
    expect(formatMilli(milli)).toBe(expected);
    expect(compareQuantities(parseQuantity(expected), { raw: '', format: 'DecimalSI', num: milli, den: 1000n })).toBe(0);
  });
});
