/**
 * Kubernetes resource.Quantity parsing (k8s.io/apimachinery/pkg/api/resource).
 *
 * Grammar (upstream):  <quantity> ::= <signedNumber><suffix>
 *   suffix: binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E)
 *           | decimalExponent (e|E followed by a signed integer)
 *
 * A parsed quantity is an exact rational `num / den` (bigint), so `0.1` and
 * `100m` compare equal and nothing is lost to floating point. `milliValue()`
 * and `value()` round up (towards +infinity) as upstream ScaledValue does.
 */

/** Thrown for a string that is not a Kubernetes quantity. */
export class QuantityParseError extends Error {
  constructor(
    readonly input: string,
    reason: string,
  ) {
    super(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (${JSON.stringify(input)}: ${reason})`,
    );
    this.name = 'QuantityParseError';
  }
}

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface Quantity {
  /** The original string. */
  readonly raw: string;
  readonly format: QuantityFormat;
  /** Exact value is num / den; den > 0. */
  readonly num: bigint;
  readonly den: bigint;
}

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/;
/** Exponents beyond this are rejected rather than building huge bigints. */
const MAX_EXPONENT = 64;

/** Parses a quantity string; throws QuantityParseError when invalid. */
export function parseQuantity(input: string): Quantity {
  if (typeof input !== 'string' || input.length === 0) throw new QuantityParseError(String(input), 'empty');
  const m = SHAPE.exec(input.trim() === input ? input : '');
  if (!m) throw new QuantityParseError(input, 'unexpected whitespace');
  const [, sign, intPart = '', fracPart = '', suffix = ''] = m;
  if (intPart.length === 0 && fracPart.length === 0) throw new QuantityParseError(input, 'missing digits');

  let num = BigInt((intPart || '0') + fracPart);
  let den = 10n ** BigInt(fracPart.length);
  let format: QuantityFormat;

  if (suffix in BINARY) {
    format = 'BinarySI';
    num *= 1n << BigInt(BINARY[suffix]);
  } else if (suffix in DECIMAL) {
    format = 'DecimalSI';
    const exp = DECIMAL[suffix];
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  } else {
    const e = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
    if (!e) throw new QuantityParseError(input, `unknown suffix ${JSON.stringify(suffix)}`);
    const exp = Number(e[1]);
    if (Math.abs(exp) > MAX_EXPONENT) throw new QuantityParseError(input, 'exponent out of range');
    format = 'DecimalExponent';
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  if (sign === '-') num = -num;
  return { raw: input, format, num, den };
}

/** True when `input` parses as a quantity. */
export function isValidQuantity(input: string): boolean {
  try {
    parseQuantity(input);
    return true;
  } catch {
    return false;
  }
}

function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a > 0n ? q + 1n : q;
}

/** The value in milli-units, rounded up (e.g. `100m` → 100n, `0.5` → 500n, `1Ki` → 1024000n). */
export function milliValue(q: Quantity | string): bigint {
  const v = typeof q === 'string' ? parseQuantity(q) : q;
  return ceilDiv(v.num * 1000n, v.den);
}

/** The value in whole units, rounded up (e.g. `128Mi` → 134217728n, `100m` → 1n). */
export function value(q: Quantity | string): bigint {
  const v = typeof q === 'string' ? parseQuantity(q) : q;
  return ceilDiv(v.num, v.den);
}

/** Exact comparison: -1, 0 or 1 as a <, =, > b. */
export function compareQuantities(a: Quantity | string, b: Quantity | string): -1 | 0 | 1 {
  const x = typeof a === 'string' ? parseQuantity(a) : a;
  const y = typeof b === 'string' ? parseQuantity(b) : b;
  const l = x.num * y.den;
  const r = y.num * x.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** True when the quantity is negative. */
export function isNegative(q: Quantity | string): boolean {
  const v = typeof q === 'string' ? parseQuantity(q) : q;
  return v.num < 0n;
}

const DECIMAL_UP = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
const BINARY_UP = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** An integer in canonical DecimalSI form: the largest exact power of 1000 ("1500M", "2", "0"). */
export function formatDecimalInteger(v: bigint): string {
  let i = 0;
  while (v !== 0n && v % 1000n === 0n && i < DECIMAL_UP.length - 1) {
    v /= 1000n;
    i++;
  }
  return `${v}${DECIMAL_UP[i]}`;
}

/**
 * A byte count as upstream's BinarySI Quantity.String(): values within (-1024, 1024)
 * print as plain numbers, others with the largest exact 1024 power ("24681788Ki", "1Gi").
 */
export function formatBytes(v: bigint): string {
  if (v > -1024n && v < 1024n) return formatDecimalInteger(v);
  let i = 0;
  while (v % 1024n === 0n && i < BINARY_UP.length - 1) {
    v /= 1024n;
    i++;
  }
  return `${v}${BINARY_UP[i]}`;
}

/** A milli-unit value as upstream's DecimalSI Quantity.String(): "1900m", "2", "0". */
export function formatMilli(milli: bigint): string {
  if (milli % 1000n === 0n) return formatDecimalInteger(milli / 1000n);
  return `${milli}m`;
}
