/**
 * The container hash stored in the `io.kubernetes.container.hash` annotation.
 * computePodActions restarts a running container whose recorded hash differs
 * from the hash of its current spec.
 *
 * Fields hashed: upstream (kubelet >= 1.31, pkg/kubelet/container/helpers.go
 * HashContainer + pickFieldsToHash) hashes only `name` and `image`, because
 * those are the only container fields the apiserver lets change on a live pod.
 * Everything else (command, env, resources, probes, ...) is immutable, so it
 * cannot drift, and leaving it out keeps containers from restarting when the
 * kubelet's defaulting changes between versions. We follow that choice.
 *
 * Wire compatibility: the value is bit-for-bit upstream's, so containers
 * started by a real kubelet are adopted rather than restarted (and vice
 * versa). Upstream computes FNV-1a/32 over spew's `%#v` rendering of the Go
 * JSON bytes of `{"image":…,"name":…}`, i.e. the text `([]uint8)[b0 b1 …]`
 * with each byte in decimal, and formats the sum as lowercase hex without
 * leading zeros (strconv.FormatUint(h, 16)). Checked against upstream's
 * container_hash_test.go vector (0x8e45cbd0).
 *
 * Pure and deterministic across processes and threads.
 */
import type { Container } from '../api/pod.js';

/** Lowercase hex hash of the container's restart-relevant fields (`name`, `image`). */
export function hashContainer(container: Pick<Container, 'name' | 'image'>): string {
  // Go's json.Marshal sorts map keys: "image" < "name".
  const json = `{"image":${goJSONString(container.image ?? '')},"name":${goJSONString(container.name)}}`;
  const bytes = Buffer.from(json, 'utf8');
  let text = '([]uint8)[';
  for (let i = 0; i < bytes.length; i++) text += (i === 0 ? '' : ' ') + bytes[i];
  text += ']';
  return fnv1a32(Buffer.from(text, 'utf8')).toString(16);
}

/**
 * True when the hash recorded on a runtime container (annotation text, '' when
 * absent) differs from `expected`. Upstream parses both as hex uint64, so leading
 * zeros and letter case do not matter; a missing or unparsable hash is 0.
 */
export function hashChanged(expected: string, recorded: string): boolean {
  return normalizeHex(expected) !== normalizeHex(recorded);
}

function normalizeHex(h: string): string {
  if (!/^[0-9a-fA-F]+$/.test(h)) return '0';
  return h.toLowerCase().replace(/^0+(?=.)/, '');
}

/** FNV-1a, 32 bit. */
function fnv1a32(data: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) {
    h ^= data[i];
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * A JSON string literal as Go's encoding/json writes it: like JSON.stringify,
 * but also escaping <, > and & (HTML-safe) and U+2028/U+2029.
 */
export function goJSONString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
