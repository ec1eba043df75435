/**
 * resource.Quantity as apimachinery v1.20 holds it in memory (ParseQuantity,
 * RoundUp), because the static-pod UID hashes that in-memory form: an
 * int64Amount {value, scale} when the number fits (with the original string
 * kept when it is already canonical), else an inf.Dec {unscaled, scale}
 * rounded up to nano precision; plus the Format. All arithmetic is bigint.
 *
 * Pure. Throws QuantityError for a string ParseQuantity rejects.
 */

export type GoFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** An inf.Dec: unscaled × 10^-scale. */
export interface GoDec {
  unscaled: bigint;
  scale: number;
}

export interface GoQuantity {
  i: { value: bigint; scale: number };
  /** null: the int64 form is used. */
  d: GoDec | null;
  s: string;
  format: GoFormat;
}

export class QuantityError extends Error {}

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);
/** apimachinery maxInt64Factors */
const MAX_INT64_FACTORS = 18;
const NANO = -9;

const DEC_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BIN_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

interface Parts {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

/** apimachinery parseQuantityString. */
function parseQuantityString(str: string): Parts {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (pos < end && (str[0] === '-' || str[0] === '+')) {
    positive = str[0] !== '-';
    pos++;
  }
  for (let i = pos; ; i++) {
    if (i >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
    if (str[i] !== '0') break;
    pos++;
  }
  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  let num: string;
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  num = str.slice(pos, i);
  pos = i;
  if (num.length === 0) num = '0';
  let denom = '';
  if (pos < end && str[pos] === '.') {
    pos++;
    let j = pos;
    while (j < end && isDigit(str[j])) j++;
    if (j >= end) return { positive, value: str, num, denom: str.slice(pos), suffix: '' };
    denom = str.slice(pos, j);
    pos = j;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  let k = pos;
  while (k < end && 'eEinumkKMGTP'.includes(str[k])) k++;
  if (k >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  pos = k;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  for (let m = pos; m < end; m++) if (!isDigit(str[m])) throw new QuantityError(`quantities must match the regular expression`);
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

function interpret(suffix: string): { base: number; exponent: number; format: GoFormat } {
  if (suffix in DEC_SUFFIXES) return { base: 10, exponent: DEC_SUFFIXES[suffix], format: 'DecimalSI' };
  if (suffix in BIN_SUFFIXES) return { base: 2, exponent: BIN_SUFFIXES[suffix], format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'E' || suffix[0] === 'e') && /^[+-]?\d+$/.test(suffix.slice(1))) {
    return { base: 10, exponent: Number(suffix.slice(1)), format: 'DecimalExponent' };
  }
  throw new QuantityError("unable to parse quantity's suffix");
}

/** inf.Dec Round with RoundUp (away from zero). */
export function decRound(d: GoDec, scale: number): GoDec {
  if (scale >= d.scale) return { unscaled: d.unscaled * 10n ** BigInt(scale - d.scale), scale };
  const f = 10n ** BigInt(d.scale - scale);
  let q = d.unscaled / f;
  if (d.unscaled % f !== 0n) q += d.unscaled < 0n ? -1n : 1n;
  return { unscaled: q, scale };
}

/** Compare two decimals. */
function decCmp(a: GoDec, b: GoDec): number {
  const s = Math.max(a.scale, b.scale);
  const x = a.unscaled * 10n ** BigInt(s - a.scale);
  const y = b.unscaled * 10n ** BigInt(s - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** inf.Dec SetString for `[+-]digits[.digits]`. */
function decFromString(v: string): GoDec {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(v);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new QuantityError("unable to parse quantity's numeric value");
  const digits = `${m[2]}${m[3] ?? ''}` || '0';
  const unscaled = BigInt(digits) * (m[1] === '-' ? -1n : 1n);
  return { unscaled, scale: (m[3] ?? '').length };
}

/** apimachinery ParseQuantity (v1.20). */
export function parseGoQuantity(str: string): GoQuantity {
  if (str.length === 0) throw new QuantityError('quantities must match the regular expression');
  if (str === '0') return { i: { value: 0n, scale: 0 }, d: null, s: '0', format: 'DecimalSI' };
  const { positive, value, num, denom, suffix } = parseQuantityString(str);
  const { base, exponent, format } = interpret(suffix);

  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc(Math.fround((exponent * 3) / 10)) - 1;
    } else precision = -1;
  } else {
    scale = exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }

  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = num + denom;
      const v = BigInt(shifted);
      if (v > MAX_INT64) throw new QuantityError('quantities must match the regular expression');
      const product = v * mantissa;
      if (product <= MAX_INT64 && product >= MIN_INT64) {
        const result = positive ? product : -product;
        let canonical: boolean;
        if (format === 'BinarySI') canonical = exponent % 10 === 0 && (v & 7n) !== 0n;
        else canonical = scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return { i: { value: result, scale }, d: null, s: canonical ? str : '', format };
      }
    }
  }

  let amount = decFromString(value);
  if (base === 10) amount = { unscaled: amount.unscaled, scale: amount.scale - exponent };
  else amount = { unscaled: amount.unscaled * (1n << BigInt(exponent)), scale: amount.scale };
  const negative = amount.unscaled < 0n;
  if (negative) amount = { unscaled: -amount.unscaled, scale: amount.scale };
  if (amount.unscaled !== 0n) amount = decRound(amount, -NANO);
  let fmt = format;
  if (fmt === 'BinarySI' && decCmp(amount, { unscaled: MAX_INT64, scale: 0 }) > 0) amount = { unscaled: MAX_INT64, scale: 0 };
  if (fmt === 'BinarySI' && decCmp(amount, { unscaled: 1n, scale: 0 }) < 0 && amount.unscaled > 0n) fmt = 'DecimalSI';
  if (negative) amount = { unscaled: -amount.unscaled, scale: amount.scale };
  return { i: { value: 0n, scale: 0 }, d: amount, s: '', format: fmt };
}

/** apimachinery negativeScaleInt64: rounds away from zero. */
function negativeScaleInt64(base: bigint, scale: number): bigint {
  if (scale === 0) return base;
  let value = base;
  let fraction = false;
  for (let i = 0; i < scale; i++) {
    if (!fraction && value % 10n !== 0n) fraction = true;
    value /= 10n;
    if (value === 0n) return fraction ? (base > 0n ? 1n : -1n) : 0n;
  }
  if (fraction) value += base > 0n ? 1n : -1n;
  return value;
}

/** apimachinery Quantity.RoundUp (mutating, as the defaulting code calls it). */
export function roundUpGoQuantity(q: GoQuantity, scale: number): void {
  if (q.d) {
    q.s = '';
    // infDecAmount.AsScale: inf scale is the negated resource scale.
    q.d = decRound(q.d, -scale);
    return;
  }
  if (q.i.scale >= scale) return;
  q.s = '';
  q.i = { value: negativeScaleInt64(q.i.value, scale - q.i.scale), scale };
}
