/**
 * Go `time.Duration` text syntax, as used by KubeletConfiguration fields
 * (`metav1.Duration`) and duration flags: a sign, then one or more
 * `<decimal><unit>` terms, e.g. "20s", "1m30s", "0.5s", "-1.5h", "300ms".
 * Units: ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h. "0" alone needs no unit.
 *
 * The project represents durations as milliseconds (a `number`, fractional
 * below 1 ms). Parsing is exact to the nanosecond (bigint) and only then
 * converted, so "1.1s" is 1100, not 1100.0000000000002.
 */
import { ConfigError } from './errors.js';

const NS_PER_UNIT: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's int64 limit: a duration above ~292 years is an error there too. */
const MAX_NS = (1n << 63n) - 1n;
const TERM = /^([0-9]*)(?:\.([0-9]*))?([^0-9.]+)/;

/** Parses a Go duration string to nanoseconds. Throws ConfigError when invalid. */
export function parseDurationNs(input: string): bigint {
  const invalid = (why: string) =>
    new ConfigError(`invalid duration ${JSON.stringify(input)}: ${why} (expected a Go duration such as "20s", "1m30s" or "500ms")`);
  let s = input;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid('empty');
  let total = 0n;
  while (s !== '') {
    const m = TERM.exec(s);
    if (!m) {
      throw invalid(/^[0-9.]+$/.test(s) ? 'missing unit' : 'malformed');
    }
    const [whole, intDigits = '', fracDigits = '', unit = ''] = m;
    if (intDigits === '' && fracDigits === '') throw invalid('a number must precede each unit');
    const unitNs = NS_PER_UNIT[unit];
    if (unitNs === undefined) throw invalid(`unknown unit ${JSON.stringify(unit)}`);
    let term = BigInt(intDigits || '0') * unitNs;
    if (fracDigits !== '') {
      // Truncates below one nanosecond, as Go does.
      term += (BigInt(fracDigits) * unitNs) / 10n ** BigInt(fracDigits.length);
    }
    total += term;
    if (total > MAX_NS) throw invalid('out of range');
    s = s.slice(whole.length);
  }
  return negative ? -total : total;
}

/** Parses a Go duration string to milliseconds. Throws ConfigError when invalid. */
export function parseDuration(input: string): number {
  const ns = parseDurationNs(input);
  const ms = ns / 1_000_000n;
  const rest = ns % 1_000_000n;
  return Number(ms) + Number(rest) / 1e6;
}

/** Whether `input` is valid Go duration syntax. */
export function isDuration(input: string): boolean {
  try {
    parseDurationNs(input);
    return true;
  } catch {
    return false;
  }
}

/** "<int>[.<frac>]" from an integer count of 10^-digits units, trailing zeros trimmed. */
function decimal(value: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const int = value / scale;
  const frac = (value % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return frac === '' ? `${int}` : `${int}.${frac}`;
}

/** Formats nanoseconds exactly as Go's Duration.String() does ("1m0s", "1.5s", "500ms", "0s"). */
export function formatDurationNs(ns: bigint): string {
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  const u = ns < 0n ? -ns : ns;
  if (u < 1_000n) return `${sign}${u}ns`;
  if (u < 1_000_000n) return `${sign}${decimal(u, 3)}µs`;
  if (u < 1_000_000_000n) return `${sign}${decimal(u, 6)}ms`;
  const h = u / 3_600_000_000_000n;
  const m = (u / 60_000_000_000n) % 60n;
  const sec = decimal(u % 60_000_000_000n, 9);
  if (h > 0n) return `${sign}${h}h${m}m${sec}s`;
  if (m > 0n) return `${sign}${m}m${sec}s`;
  return `${sign}${sec}s`;
}

/** Formats milliseconds as a Go duration string (rounded to the nanosecond). */
export function formatDuration(ms: number): string {
  return formatDurationNs(BigInt(Math.round(ms * 1e6)));
}
