/**
 * The JSON of a list object (a PodList) as chunks of bytes, built item by
 * item: together the same bytes as `Buffer.from(JSON.stringify(list))`,
 * without one string or one buffer of the whole list. /pods of 1000 pods is
 * ~2 MB: as one string it is built, flattened and copied again into the
 * response, and the megabytes of short-lived strings cost the main thread
 * more than the serialization; joined into one buffer, the copy (and the
 * fresh pages it writes) cost the agent 8–11 ms of CPU a request, against
 * 2.2–2.4 ms for the chunks written as they are, one gathered write
 * (`npm run bench -- pods-endpoint`, bench/results/pods-endpoint-ab-*).
 */

const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/**
 * `list` as JSON chunks; a list whose last key is not an `items` array is
 * stringified whole (one chunk). `cache`: the JSON of item objects already
 * seen, by identity (for lists whose items are replaced, never changed in place).
 */
export function jsonListChunks(list: unknown, cache?: WeakMap<object, Buffer>): Buffer[] {
  const keys = list !== null && typeof list === 'object' && !Array.isArray(list) ? Object.keys(list) : [];
  const items = (list as { items?: unknown } | null)?.items;
  if (keys.at(-1) !== 'items' || !Array.isArray(items) || typeof (list as { toJSON?: unknown }).toJSON === 'function') {
    return [Buffer.from(JSON.stringify(list) ?? '')];
  }
  // `{…,"items":[]}` split around the empty array.
  const shell = JSON.stringify({ ...(list as object), items: [] });
  const chunks: Buffer[] = [Buffer.from(shell.slice(0, -2))];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) chunks.push(COMMA);
    const item: unknown = items[i];
    const cacheable = cache !== undefined && item !== null && typeof item === 'object';
    let bytes = cacheable ? cache.get(item) : undefined;
    if (bytes === undefined) {
      // An array element that JSON cannot represent (undefined, a function) is null, as in JSON.stringify.
      bytes = Buffer.from(JSON.stringify(item) ?? 'null');
      if (cacheable) cache.set(item, bytes);
    }
    chunks.push(bytes);
  }
  chunks.push(CLOSE);
  return chunks;
}
