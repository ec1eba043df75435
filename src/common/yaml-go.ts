/**
 * YAML as the Go kubelet v1.20.2 reads static pod manifests and its
 * KubeletConfiguration file: gopkg.in/yaml.v2 (v2.2.8) decodes the text into
 * Go values, then sigs.k8s.io/yaml's YAMLToJSON makes them JSON, which
 * encoding/json-style decoding puts into the typed object.
 *
 * Contract (vendor/gopkg.in/yaml.v2/resolve.go and vendor/sigs.k8s.io/yaml/yaml.go):
 *  - A plain scalar resolves as go-yaml's resolve(): y/Y/yes/Yes/YES,
 *    true/True/TRUE, on/On/ON are true and their n/no/false/off forms false;
 *    ''/~/null/Null/NULL are null; .inf/.nan (and their +/-/case forms in
 *    the table) are ±Inf/NaN; text starting with '.' is a float when
 *    strconv.ParseFloat takes it; text starting with a digit or sign is, with
 *    every '_' removed, an integer when strconv.ParseInt(s, 0, 64) or
 *    ParseUint(s, 0, 64) takes it (0x1f, 0o17, 0b101, 017 octal, 1_000), else
 *    a float when it matches yamlStyleFloat (1e3, 1., .5) and ParseFloat does
 *    not overflow; everything else is a string (e1, E7, 12:30, 2001-12-14,
 *    1e999). No sexagesimal numbers; timestamps stay strings (decode.go keeps
 *    a timestamp decoded into interface{} as its text).
 *  - Quoted and block scalars are strings. An explicit !!int, !!float, !!bool
 *    or !!null tag resolves the text the same way and is an error when the
 *    kind differs (an integer is taken as a float); !!str is a string.
 *  - `<<` merge keys, anchors and aliases work as in go-yaml.
 *  - Integers are bigint (exact int64/uint64 values), floats are numbers.
 *
 * goYamlToJson then applies YAMLToJSON's convertToJSONableObject with no
 * target, as the kubelet calls it (util/yaml.ToJSON and the json serializer
 * both use yaml.YAMLToJSON): map keys become strings (integers in decimal,
 * floats as strconv.FormatFloat(f, 'g', -1, 32) with .inf/-.inf/.nan, bools
 * as true/false; a null, uint64 or collection key is an error) and a NaN or
 * ±Inf value is an error (json.Marshal refuses it). Values keep their type:
 * `name: yes` stays a boolean and `name: 1` a number, which the typed
 * decoding then refuses, as Go's does.
 */
import type { DocumentOptions, ParseOptions, ScalarTag, SchemaOptions, Tags, ToJSOptions } from 'yaml';

/** A scalar as go-yaml resolves it: nil, bool, int/int64/uint64 (bigint), float64 (number) or string. */
export type GoScalar = null | boolean | bigint | number | string;

const MAX_INT64 = (1n << 63n) - 1n;
const MAX_UINT64 = (1n << 64n) - 1n;

/** resolve.go resolveMap (the `<<` entry is the merge tag, handled by the yaml package). */
const RESOLVE_MAP = new Map<string, GoScalar>();
const table: [GoScalar, string[]][] = [
  [true, ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']],
  [false, ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']],
  [null, ['', '~', 'null', 'Null', 'NULL']],
  [NaN, ['.nan', '.NaN', '.NAN']],
  [Infinity, ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']],
  [-Infinity, ['-.inf', '-.Inf', '-.INF']],
];
for (const [value, forms] of table) for (const s of forms) RESOLVE_MAP.set(s, value);

/** resolve.go resolveTable: first characters that may start a non-string. */
const HINTED = /^[-+0-9yYnNtTfFoO~.]/;
const SIGN_OR_DIGIT = /^[-+0-9]/;
/** resolve.go yamlStyleFloat. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** What strconv.ParseFloat accepts of text starting with '.': Go float syntax, '_' only between digits. */
const DOT_FLOAT = /^\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?$/;
const DIGITS: Record<number, RegExp> = { 2: /^[01]*$/, 8: /^[0-7]*$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]*$/ };
const PREFIX: Record<number, string> = { 2: '0b', 8: '0o', 10: '', 16: '0x' };

/** strconv.ParseUint(s, 0, 64) for text without underscores; undefined on a syntax or range error. */
function parseUint0(s: string): bigint | undefined {
  if (s === '') return undefined;
  let base = 10;
  let digits = s;
  if (s[0] === '0') {
    const p = s.length >= 3 ? s[1].toLowerCase() : '';
    base = p === 'b' ? 2 : p === 'x' ? 16 : 8;
    digits = p === 'b' || p === 'o' || p === 'x' ? s.slice(2) : s.slice(1);
  }
  if (!DIGITS[base].test(digits)) return undefined;
  const n = digits === '' ? 0n : BigInt(PREFIX[base] + digits);
  return n <= MAX_UINT64 ? n : undefined;
}

/** strconv.ParseInt(s, 0, 64) for text without underscores; undefined on a syntax or range error. */
function parseInt0(s: string): bigint | undefined {
  const neg = s[0] === '-';
  const n = parseUint0(neg || s[0] === '+' ? s.slice(1) : s);
  if (n === undefined || n > (neg ? MAX_INT64 + 1n : MAX_INT64)) return undefined;
  return neg ? -n : n;
}

/** strconv.ParseFloat(s, 64) for decimal text already known to be well-formed; undefined when it overflows. */
function parseFloat64(s: string): number | undefined {
  const f = Number(s.replaceAll('_', ''));
  return Number.isFinite(f) ? f : undefined;
}

/** go-yaml v2 resolve("", s) of a plain scalar, timestamps kept as text (see the module comment). */
export function resolvePlainScalar(s: string): GoScalar {
  if (s !== '' && !HINTED.test(s)) return s;
  if (RESOLVE_MAP.has(s)) return RESOLVE_MAP.get(s)!;
  if (s[0] === '.') return (DOT_FLOAT.test(s) ? parseFloat64(s) : undefined) ?? s;
  if (!SIGN_OR_DIGIT.test(s)) return s;
  // A timestamp (YYYY-...) is never a number, so skipping parseTimestamp changes nothing.
  const plain = s.replaceAll('_', '');
  const int = parseInt0(plain) ?? parseUint0(plain);
  if (int !== undefined) return int;
  // go-yaml's own 0b/-0b fallbacks repeat what ParseInt base 0 already does since Go 1.13.
  return (YAML_STYLE_FLOAT.test(plain) ? parseFloat64(plain) : undefined) ?? s;
}

type GoKind = 'null' | 'bool' | 'int' | 'float' | 'str';

function kindOf(v: GoScalar): GoKind {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  return typeof v === 'number' ? 'float' : 'str';
}

/** go-yaml resolve(tag, s) for an explicit !!<kind> tag. */
function explicitTag(kind: Exclude<GoKind, 'str'>): ScalarTag {
  return {
    tag: `tag:yaml.org,2002:${kind}`,
    identify: () => false,
    resolve(s, onError) {
      const v = resolvePlainScalar(s);
      const got = kindOf(v);
      if (got === kind) return v;
      if (kind === 'float' && typeof v === 'bigint') return Number(v);
      onError(`cannot decode !!${got} \`${s}\` as a !!${kind}`);
      return s;
    },
  };
}

/** Every plain scalar but the `<<` merge key goes through resolvePlainScalar. */
const PLAIN: ScalarTag = {
  tag: 'tag:kubelet-ts,2025:go-yaml-plain',
  default: true,
  test: /^(?!<<$)/,
  identify: () => false,
  resolve: (s) => resolvePlainScalar(s),
};

/**
 * Options for yaml's parse(), parseDocument() and Document#toJS(): scalars
 * resolve as go-yaml v2 does, mappings come out as Maps (their keys are
 * still Go values) for goYamlToJson.
 */
export const GO_YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions & ToJSOptions = {
  version: '1.1',
  schema: 'failsafe',
  merge: true,
  resolveKnownTags: false,
  customTags: (failsafe: Tags): Tags => [PLAIN, ...(['int', 'float', 'bool', 'null'] as const).map(explicitTag), ...failsafe],
  mapAsMap: true,
};

// ---------------------------------------------------------------------------
// strconv.FormatFloat(f, 'g', -1, 32)

const F32 = new DataView(new ArrayBuffer(4));
const p10 = (e: number): bigint => 10n ** BigInt(Math.max(e, 0));
const p2 = (e: number): bigint => 2n ** BigInt(Math.max(e, 0));

/**
 * The shortest digits that read back as the same float32 (ties to the
 * nearest, then even, as Go's roundShortest), and the decimal point's place:
 * value = 0.<digits> × 10^dp.
 */
function shortestFloat32(expBits: number, frac: number): { digits: string; dp: number } {
  const mant = BigInt(expBits === 0 ? frac : frac | 0x800000);
  // In units of 2^s: the value, and the halfway points to its neighbours (closer below a power of two).
  const s = (expBits === 0 ? 1 : expBits) - 150 - 2;
  const v = 4n * mant;
  const upper = v + 2n;
  const lower = frac === 0 && expBits > 1 ? v - 1n : v - 2n;
  const inclusive = mant % 2n === 0n;
  const cmp = (d: bigint, q: number, x: bigint): number => {
    const l = d * p10(q) * p2(-s);
    const r = x * p2(s) * p10(-q);
    return l < r ? -1 : l > r ? 1 : 0;
  };
  let e10 = Math.floor(Math.log10(Number(mant) * 2 ** (s + 2)));
  if (cmp(1n, e10, v) > 0) e10--;
  if (cmp(1n, e10 + 1, v) <= 0) e10++;
  const result = (d: bigint, q: number) => {
    const text = d.toString();
    return { digits: text.replace(/0+$/, ''), dp: text.length + q };
  };
  for (let n = 1; ; n++) {
    const q = e10 - n + 1;
    const num = v * p2(s) * p10(-q);
    const den = p2(-s) * p10(q);
    const down = num / den;
    if (down * den === num) return result(down, q);
    const up = down + 1n;
    const lo = cmp(down, q, lower);
    const hi = cmp(up, q, upper);
    const okDown = lo > 0 || (inclusive && lo === 0);
    const okUp = hi < 0 || (inclusive && hi === 0);
    if (okDown && okUp) {
      const below = num - down * den;
      const above = up * den - num;
      return result(below < above || (below === above && down % 2n === 0n) ? down : up, q);
    }
    if (okDown) return result(down, q);
    if (okUp) return result(up, q);
  }
}

/** Go's strconv.FormatFloat(f, 'g', -1, 32): f rounded to float32, shortest digits, %e when exp < -4 || exp >= 6. */
export function formatFloat32(f: number): string {
  F32.setFloat32(0, f);
  const bits = F32.getUint32(0);
  const sign = bits >>> 31 === 1 ? '-' : '';
  const expBits = (bits >>> 23) & 0xff;
  const frac = bits & 0x7fffff;
  if (expBits === 0xff) return frac !== 0 ? 'NaN' : `${sign || '+'}Inf`;
  if (expBits === 0 && frac === 0) return `${sign}0`;
  const { digits, dp } = shortestFloat32(expBits, frac);
  const exp = dp - 1;
  if (exp < -4 || exp >= 6) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (dp <= 0) return `${sign}0.${'0'.repeat(-dp)}${digits}`;
  if (dp >= digits.length) return `${sign}${digits}${'0'.repeat(dp - digits.length)}`;
  return `${sign}${digits.slice(0, dp)}.${digits.slice(dp)}`;
}

// ---------------------------------------------------------------------------
// sigs.k8s.io/yaml YAMLToJSON (convertToJSONableObject with no target, then json.Marshal)

/** A path into the document: keys and array indexes. */
export type GoYamlPath = readonly (string | number)[];

export interface GoYamlToJsonOptions {
  /** Keep integers as bigint (exact); otherwise they become numbers. */
  bigint: boolean;
  /** Called with where and what for a value Go's YAMLToJSON refuses; must throw. */
  fail: (path: GoYamlPath, reason: string) => never;
}

function floatName(f: number): string {
  return Number.isNaN(f) ? 'NaN' : f > 0 ? '+Inf' : '-Inf';
}

/** The JSON key convertToJSONableObject makes of a go-yaml map key. */
function jsonKey(key: unknown, path: GoYamlPath, fail: GoYamlToJsonOptions['fail']): string {
  switch (typeof key) {
    case 'string':
      return key;
    case 'boolean':
      return String(key);
    case 'bigint':
      // Keys of uint64 range are not among the key types it converts.
      return key <= MAX_INT64 ? key.toString() : fail(path, `map key ${key} is out of the int64 range; quote it`);
    case 'number': {
      const s = formatFloat32(key);
      return s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s;
    }
    default:
      return key === null
        ? fail(path, 'a null map key (empty, ~ or null) has no JSON form; quote it')
        : fail(path, 'a map key must be a scalar');
  }
}

/**
 * The JSON value sigs.k8s.io/yaml's YAMLToJSON makes of a document that
 * yaml parsed with GO_YAML_OPTIONS (Maps for mappings): objects with string
 * keys, arrays and scalars of unchanged type. Calls `fail` for a NaN or ±Inf
 * value and for a key that cannot become a string.
 */
export function goYamlToJson(value: unknown, options: GoYamlToJsonOptions): unknown {
  const path: (string | number)[] = [];
  const walk = (v: unknown): unknown => {
    if (v instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of v) {
        const key = jsonKey(k, path, options.fail);
        path.push(key);
        const json = walk(x);
        if (key === '__proto__') Object.defineProperty(out, key, { value: json, enumerable: true, writable: true, configurable: true });
        else out[key] = json;
        path.pop();
      }
      return out;
    }
    if (Array.isArray(v)) {
      return v.map((x: unknown, i) => {
        path.push(i);
        const r = walk(x);
        path.pop();
        return r;
      });
    }
    switch (typeof v) {
      case 'bigint':
        return options.bigint ? v : Number(v);
      case 'number':
        return Number.isFinite(v)
          ? v
          : options.fail(path, `${floatName(v)} (from .inf or .nan) has no JSON form (json: unsupported value); quote it for a string`);
      case 'string':
      case 'boolean':
        return v;
      default:
        return v === null ? null : options.fail(path, `unsupported ${typeof v} value`);
    }
  };
  return walk(value);
}
