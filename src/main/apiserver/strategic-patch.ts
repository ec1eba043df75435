/**
 * Two-way strategic merge patches (apimachinery strategicpatch.CreateTwoWayMergePatch),
 * for the fields the kubelet writes: maps merge key by key (a removed key is
 * `null`); lists the server merges by a key (`mergeKeys`, by dotted path) get
 * new elements whole, changed ones as their merge key plus the fields that
 * differ (a removed field is `null`), `{key, $patch: delete}` for removed ones and
 * `$setElementOrder/<field>`; lists in `replaceLists` are sent whole with a
 * `{$patch: replace}` element (the server would merge them otherwise); every
 * other list is atomic and sent whole when it differs.
 */
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;

export interface PatchSchema {
  /** Dotted path of a list → its patchMergeKey (e.g. 'status.conditions' → 'type'). */
  mergeKeys?: Record<string, string>;
  /** Dotted paths of merge-key lists to replace as a whole. */
  replaceLists?: readonly string[];
}

const isMap = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

function listPatch(
  before: Json[],
  after: Json[],
  key: string,
  schema: PatchSchema,
  path: string,
): { items: Json[]; order: Json[] } | undefined {
  const old = new Map(before.map((e) => [e[key], e]));
  const items: Json[] = [];
  for (const e of after) {
    const prev = old.get(e[key]);
    if (prev === undefined) items.push(e);
    else if (!isDeepStrictEqual(prev, e)) items.push({ [key]: e[key], ...diff(prev, e, schema, path) });
  }
  const keep = new Set(after.map((e) => e[key]));
  for (const e of before) if (!keep.has(e[key])) items.push({ [key]: e[key], $patch: 'delete' });
  const sameOrder = isDeepStrictEqual(
    before.map((e) => e[key]),
    after.map((e) => e[key]),
  );
  if (items.length === 0 && sameOrder) return undefined;
  return { items, order: after.map((e) => ({ [key]: e[key] })) };
}

function diff(before: Json, after: Json, schema: PatchSchema, path: string): Json | undefined {
  const out: Json = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[k];
    const a = after[k];
    if (isDeepStrictEqual(a, b)) continue;
    const p = path ? `${path}.${k}` : k;
    if (a === undefined) {
      out[k] = null;
    } else if (isMap(a) && isMap(b)) {
      const sub = diff(b, a, schema, p);
      if (sub) out[k] = sub;
    } else if (Array.isArray(a) && schema.replaceLists?.includes(p)) {
      out[k] = [...(a as unknown[]), { $patch: 'replace' }];
    } else if (Array.isArray(a) && Array.isArray(b) && schema.mergeKeys?.[p]) {
      const lp = listPatch(b as Json[], a as Json[], schema.mergeKeys[p], schema, p);
      if (lp) {
        if (lp.items.length > 0) out[k] = lp.items;
        out[`$setElementOrder/${k}`] = lp.order;
      }
    } else {
      out[k] = a;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The patch from `before` to `after` (plain JSON), or undefined when they are equal. */
export function twoWayMergePatch(before: unknown, after: unknown, schema: PatchSchema = {}): Json | undefined {
  // Go's omitempty: an empty list and a missing one serialise alike.
  const plain = (x: unknown) =>
    JSON.parse(JSON.stringify(x ?? {}), (_k, v: unknown) => (Array.isArray(v) && v.length === 0 ? undefined : v)) as Json;
  return diff(plain(before), plain(after), schema, '');
}
