/**
 * The apiserver's side of a strategic merge patch (apimachinery
 * StrategicMergeMapPatch), reduced to what the kubelet's patches use: maps merge
 * key by key and `null` deletes; a list whose path has a merge key merges its
 * elements by that key (`{key, $patch: delete}` removes one, a changed element
 * merges into the old one as a map, `$setElementOrder/<field>` orders the
 * result); a list holding `{$patch: replace}` replaces the old list; any other
 * list is atomic. Test-only: it lets tests check what a patch does to the
 * stored object, not just what bytes it has.
 */
type Json = Record<string, unknown>;

const isMap = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

function mergeList(
  old: Json[],
  patch: Json[],
  key: string,
  order: Json[] | undefined,
  mergeKeys: Record<string, string>,
  path: string,
): Json[] {
  const out = old.map((e) => structuredClone(e));
  for (const e of patch) {
    const i = out.findIndex((o) => o[key] === e[key]);
    if (e.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) {
      out[i] = applyStrategicPatch(out[i], e, mergeKeys, path);
    } else {
      out.push(structuredClone(e));
    }
  }
  if (!order) return out;
  const rank = (e: Json) => {
    const r = order.findIndex((o) => o[key] === e[key]);
    return r < 0 ? order.length : r;
  };
  return out.sort((a, b) => rank(a) - rank(b));
}

/** Applies `patch` to `original` (neither is modified). `mergeKeys` maps a dotted list path to its merge key. */
export function applyStrategicPatch(original: unknown, patch: Json, mergeKeys: Record<string, string> = {}, path = ''): Json {
  const out: Json = isMap(original) ? structuredClone(original) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/')) continue;
    const p = path ? `${path}.${k}` : k;
    const old = out[k];
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      const items = v as Json[];
      if (items.some((e) => isMap(e) && e.$patch === 'replace')) {
        out[k] = items.filter((e) => !(isMap(e) && e.$patch === 'replace'));
      } else if (mergeKeys[p]) {
        const order = patch[`$setElementOrder/${k}`] as Json[] | undefined;
        out[k] = mergeList(Array.isArray(old) ? (old as Json[]) : [], items, mergeKeys[p], order, mergeKeys, p);
      } else {
        out[k] = structuredClone(v);
      }
    } else if (isMap(v) && isMap(old)) {
      out[k] = applyStrategicPatch(old, v, mergeKeys, p);
    } else {
      out[k] = structuredClone(v);
    }
  }
  // A merge list whose only patch is its order directive.
  for (const k of Object.keys(patch)) {
    if (!k.startsWith('$setElementOrder/')) continue;
    const field = k.slice('$setElementOrder/'.length);
    const p = path ? `${path}.${field}` : field;
    if (patch[field] === undefined && Array.isArray(out[field]) && mergeKeys[p])
      out[field] = mergeList(out[field] as Json[], [], mergeKeys[p], patch[k] as Json[], mergeKeys, p);
  }
  return out;
}
