/**
 * Flag value parsers with upstream (pflag / component-base) semantics. Each
 * throws an Error with a message that the caller prefixes with the flag name.
 */
import { parseDuration } from '../../common/duration.js';
import { TAINT_EFFECTS, type TaintSpec } from './taints.js';

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** Go strconv.ParseBool, as pflag uses it. Throws on anything else. */
export function parseBool(value: string): boolean {
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new Error(`invalid boolean ${JSON.stringify(value)} (use true or false)`);
}

/** A base-10 integer within the safe range. */
export function parseInteger(value: string): number {
  if (!/^[+-]?[0-9]+$/.test(value.trim())) throw new Error(`invalid integer ${JSON.stringify(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`integer ${value} is out of range`);
  return n;
}

/** Splits "k<sep>v,k<sep>v" pairs; empty pairs are skipped, a pair without sep is an error. */
function pairs(value: string, sep: string, expect: string): [string, string][] {
  const out: [string, string][] = [];
  for (const pair of value.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf(sep);
    if (at < 0) throw new Error(`malformed pair ${JSON.stringify(pair)}, expect ${expect}`);
    out.push([pair.slice(0, at).trim(), pair.slice(at + 1).trim()]);
  }
  return out;
}

/** Upstream ColonSeparatedMultimapStringString: 'a:hello,b:again' appended into `into`. */
export function parseColonMultimap(value: string, into: Record<string, string[]> = {}): Record<string, string[]> {
  for (const [k, v] of pairs(value, ':', 'key:value')) (into[k] ??= []).push(v);
  return into;
}

/** Upstream MapStringString: 'k=v,k2=v2' merged into `into`. */
export function parseKeyValueMap(value: string, into: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of pairs(value, '=', 'key=value')) into[k] = v;
  return into;
}

/** Upstream LangleSeparatedMapStringString: 'memory.available<100Mi,...' merged into `into`. */
export function parseLangleMap(value: string, into: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of pairs(value, '<', 'signal<threshold')) into[k] = v;
  return into;
}

/** Upstream ParseTaints: 'key=value:Effect' or 'key:Effect', comma-separated, appended. */
export function parseTaints(value: string, into: TaintSpec[] = []): TaintSpec[] {
  for (const item of value.split(',')) {
    const text = item.trim();
    if (text === '') continue;
    const colon = text.lastIndexOf(':');
    if (colon < 0) throw new Error(`invalid taint ${JSON.stringify(text)}: expect key=value:Effect or key:Effect`);
    const effect = text.slice(colon + 1);
    if (!(TAINT_EFFECTS as readonly string[]).includes(effect)) {
      throw new Error(`invalid taint effect ${JSON.stringify(effect)} in ${JSON.stringify(text)} (valid: ${TAINT_EFFECTS.join(', ')})`);
    }
    const kv = text.slice(0, colon);
    const eq = kv.indexOf('=');
    const key = eq < 0 ? kv : kv.slice(0, eq);
    if (key === '') throw new Error(`invalid taint ${JSON.stringify(text)}: empty key`);
    const e = effect as TaintSpec['effect'];
    into.push(eq < 0 ? { key, effect: e } : { key, value: kv.slice(eq + 1), effect: e });
  }
  return into;
}

/** Upstream StringSlice: comma-separated, appended. */
export function parseList(value: string, into: string[] = []): string[] {
  for (const item of value.split(',')) if (item.trim() !== '') into.push(item.trim());
  return into;
}

/** Go strconv.ParseFloat, decimal forms. */
export function parseFloatValue(value: string): number {
  if (!/^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(value.trim()))
    throw new Error(`invalid number ${JSON.stringify(value)}`);
  return Number(value);
}

/** Upstream --eviction-soft-grace-period: 'signal=duration,...' merged into `into`, durations in ms. */
export function parseGracePeriods(value: string, into: Record<string, number> = {}): Record<string, number> {
  for (const [k, v] of pairs(value, '=', 'signal=duration')) into[k] = parseDuration(v);
  return into;
}
