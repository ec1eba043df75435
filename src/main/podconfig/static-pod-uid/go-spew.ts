/**
 * go-spew's `%#v` rendering (ConfigState{SortKeys, DisableMethods}) of a Go
 * value, driven by a Go type layout (go-types-1.20.ts). This is the text the
 * v1.20 kubelet's hash.DeepHashObject feeds to md5.
 *
 * Rules reproduced from go-spew's formatter:
 *  - a value is prefixed with `(<type>)` unless it is a slice element, a map
 *    key or value, or the target of a pointer (then the type is suppressed);
 *  - a pointer prints `(*T)` then its target, `(*T)<nil>` when nil, and
 *    `<*>` / `<nil>` where types are suppressed;
 *  - structs `{Name:value Name:value}`, embedded fields by their type name;
 *  - slices `[a b]`, maps `map[k:v k:v]` with keys sorted, nil ones `<nil>`;
 *  - strings raw (no quotes), bools true/false, integers in decimal.
 *
 * Value model (what decode-pod.ts builds): a struct is a plain object keyed
 * by Go field name (a missing key is the zero value); a pointer, slice or map
 * is nil when undefined or null; integers are numbers or bigints.
 */
import type { GoType } from './go-types-1.20.js';

export type GoTypes = Record<string, GoType>;

function bytesCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const SURROGATE = /[\ud800-\udfff]/;

/**
 * Map keys in the byte order of their UTF-8 encoding (go-spew's SortKeys on
 * strings). Without surrogates that is the strings' code unit order; keys
 * with one (a lone one encodes as U+FFFD) are compared by their bytes.
 */
function sortKeys(keys: string[]): string[] {
  if (keys.some((k) => SURROGATE.test(k))) return keys.sort(bytesCompare);
  return keys.sort((a, b) => (a < b ? -1 : 1));
}

function zeroOf(t: GoType): unknown {
  switch (t.k) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'struct':
      return {};
    case 'ptr':
    case 'slice':
    case 'map':
      return undefined;
    default:
      return 0;
  }
}

export class GoSpew {
  /**
   * The rendering of each type's zero value (nil or missing) by type name,
   * with and without its type prefix: it depends on the type alone, and
   * most of a core.Pod is zero.
   */
  private readonly zeroTyped = new Map<string, string>();
  private readonly zeroUntyped = new Map<string, string>();

  constructor(private readonly types: GoTypes) {}

  private type(name: string): GoType {
    const t = this.types[name];
    if (!t) throw new Error(`go-spew: unknown Go type ${name}`);
    return t;
  }

  /** `%#v` of a value of Go type `typeName`. */
  render(typeName: string, value: unknown): string {
    const out: string[] = [];
    this.format(out, typeName, value, false);
    return out.join('');
  }

  private format(out: string[], name: string, value: unknown, ignoreType: boolean): void {
    if (value !== undefined && value !== null) return this.formatValue(out, name, value, ignoreType);
    const zero = ignoreType ? this.zeroUntyped : this.zeroTyped;
    let text = zero.get(name);
    if (text === undefined) {
      const parts: string[] = [];
      this.formatValue(parts, name, undefined, ignoreType);
      text = parts.join('');
      zero.set(name, text);
    }
    out.push(text);
  }

  private formatValue(out: string[], name: string, value: unknown, ignoreType: boolean): void {
    const t = this.type(name);
    if (t.k === 'ptr') {
      if (value === undefined || value === null) {
        out.push(ignoreType ? '<nil>' : `(${name})<nil>`);
        return;
      }
      out.push(ignoreType ? '<*>' : `(*${t.e})`);
      this.format(out, t.e, value, true);
      return;
    }
    if (!ignoreType) out.push(`(${name})`);
    const v = value ?? zeroOf(t);
    switch (t.k) {
      case 'bool':
        out.push(v ? 'true' : 'false');
        return;
      case 'string':
        out.push(String(v));
        return;
      case 'slice':
      case 'array': {
        if (v === undefined) {
          out.push('<nil>');
          return;
        }
        const items = v as unknown[];
        out.push('[');
        items.forEach((item, i) => {
          if (i > 0) out.push(' ');
          this.format(out, t.e, item, true);
        });
        out.push(']');
        return;
      }
      case 'map': {
        if (v === undefined) {
          out.push('<nil>');
          return;
        }
        const m = v as Record<string, unknown>;
        out.push('map[');
        sortKeys(Object.keys(m)).forEach((k, i) => {
          if (i > 0) out.push(' ');
          this.format(out, t.key, k, true);
          out.push(':');
          this.format(out, t.e, m[k], true);
        });
        out.push(']');
        return;
      }
      case 'struct': {
        const obj = v as Record<string, unknown>;
        out.push('{');
        t.f.forEach(([field, ftype], i) => {
          if (i > 0) out.push(' ');
          out.push(`${field}:`);
          this.format(out, ftype, obj[field], false);
        });
        out.push('}');
        return;
      }
      default:
        out.push(String(v));
    }
  }
}
