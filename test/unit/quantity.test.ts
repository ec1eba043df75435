import { describe, expect, it } from 'vitest';
import { compareQuantities, isValidQuantity, milliValue, parseQuantity, QuantityParseError, value } from '../../src/api/quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['100m', 100n, 1n, 'DecimalSI'],
    ['0.5', 500n, 1n, 'DecimalSI'],
    ['1', 1000n, 1n, 'DecimalSI'],
    ['128Mi', 134217728000n, 134217728n, 'BinarySI'],
    ['1Ki', 1024000n, 1024n, 'BinarySI'],
    ['1G', 1_000_000_000_000n, 1_000_000_000n, 'DecimalSI'],
    ['1e3', 1_000_000n, 1000n, 'DecimalExponent'],
    ['1E3', 1_000_000n, 1000n, 'DecimalExponent'],
    ['1.5e-3', 2n, 1n, 'DecimalExponent'],
    ['1n', 1n, 1n, 'DecimalSI'],
    ['250u', 1n, 1n, 'DecimalSI'],
    ['2k', 2_000_000n, 2000n, 'DecimalSI'],
    ['.5', 500n, 1n, 'DecimalSI'],
    ['+3', 3000n, 3n, 'DecimalSI'],
    ['1E', 1_000_000_000_000_000_000_000n, 1_000_000_000_000_000_000n, 'DecimalSI'],
    ['-1', -1000n, -1n, 'DecimalSI'],
  ] as const)('%s → milli %s, value %s (%s)', (input, milli, whole, format) => {
    expect(milliValue(input)).toBe(milli);
    expect(value(input)).toBe(whole);
    expect(parseQuantity(input).format).toBe(format);
  });

  it.each(['', ' 1', '1 ', 'abc', '1.2.3', '1Kb', '1e', 'm', '1mi', '--1', '1e999', '0x10', '1Ki3'])('rejects %j', (input) => {
    expect(() => parseQuantity(input)).toThrow(QuantityParseError);
    expect(isValidQuantity(input)).toBe(false);
  });

  it('compares exactly across formats', () => {
    expect(compareQuantities('100m', '0.1')).toBe(0);
    expect(compareQuantities('1Gi', '1G')).toBe(1);
    expect(compareQuantities('999m', '1')).toBe(-1);
    expect(compareQuantities('1e3', '1k')).toBe(0);
  });
});
