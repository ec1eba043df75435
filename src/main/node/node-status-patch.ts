/**
 * The strategic merge patch that turns one node status into another (upstream
 * PatchNodeStatus sends a two-way strategic merge patch of the status). Rules
 * of core/v1 NodeStatus: `conditions` merge by `type` (conditions other
 * components own are left alone), `addresses` are replaced as a whole (the
 * kubelet owns them, and dual-stack has two of one type), `images` are atomic,
 * maps merge key by key with `null` deleting a key.
 */
import { isDeepStrictEqual } from 'node:util';
import type { NodeStatus } from '../../api/cluster.js';

type Json = Record<string, unknown>;

function mapPatch(before: Json | undefined, after: Json | undefined): Json | undefined {
  const out: Json = {};
  for (const [k, v] of Object.entries(after ?? {})) {
    const old = before?.[k];
    if (isDeepStrictEqual(old, v)) continue;
    const isMap = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
    out[k] = isMap(v) && isMap(old) ? (mapPatch(old, v) ?? {}) : v;
  }
  for (const k of Object.keys(before ?? {})) if (!(k in (after ?? {}))) out[k] = null;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The patch body `{status: …}`, or undefined when nothing differs. Inputs are plain JSON (no undefined values). */
export function nodeStatusPatch(beforeIn: NodeStatus | undefined, afterIn: NodeStatus): Json | undefined {
  const before = JSON.parse(JSON.stringify(beforeIn ?? {})) as Json;
  const after = JSON.parse(JSON.stringify(afterIn)) as Json;
  const status: Json = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[key];
    const a = after[key];
    if (isDeepStrictEqual(a, b)) continue;
    if (key === 'conditions') {
      const oldByType = new Map(((b as Json[] | undefined) ?? []).map((c) => [c.type, c]));
      const changed = ((a as Json[] | undefined) ?? []).filter((c) => !isDeepStrictEqual(oldByType.get(c.type), c));
      if (changed.length > 0) {
        status.conditions = changed;
        status['$setElementOrder/conditions'] = ((a as Json[] | undefined) ?? []).map((c) => ({ type: c.type }));
      }
    } else if (key === 'addresses') {
      status.addresses = [...((a as Json[] | undefined) ?? []), { $patch: 'replace' }];
    } else if (a === undefined) {
      status[key] = null;
    } else if (typeof a === 'object' && a !== null && !Array.isArray(a)) {
      const sub = mapPatch(b as Json | undefined, a as Json);
      if (sub) status[key] = sub;
    } else {
      status[key] = a;
    }
  }
  return Object.keys(status).length > 0 ? { status } : undefined;
}
