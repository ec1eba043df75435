/**
 * Ids for sandboxes and containers: 64 lowercase hex characters, as containerd
 * generates them. Lookups accept any unique prefix, as containerd's truncindex
 * does; an exact id is found in O(1), a prefix costs one scan of the map.
 */
import { randomBytes } from 'node:crypto';

export function newId(): string {
  return randomBytes(32).toString('hex');
}

export type PrefixLookup<T> = { kind: 'found'; value: T } | { kind: 'missing' } | { kind: 'ambiguous' };

/** Resolves an exact id or a unique id prefix. An empty string never matches. */
export function lookupId<T>(map: ReadonlyMap<string, T>, idOrPrefix: string): PrefixLookup<T> {
  if (idOrPrefix === '') return { kind: 'missing' };
  const exact = map.get(idOrPrefix);
  if (exact !== undefined) return { kind: 'found', value: exact };
  if (idOrPrefix.length >= 64) return { kind: 'missing' };
  let hit: T | undefined;
  for (const [id, value] of map) {
    if (!id.startsWith(idOrPrefix)) continue;
    if (hit !== undefined) return { kind: 'ambiguous' };
    hit = value;
  }
  return hit === undefined ? { kind: 'missing' } : { kind: 'found', value: hit };
}
