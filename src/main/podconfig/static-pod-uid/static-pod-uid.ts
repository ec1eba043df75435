/**
 * The UID the v1.20.2 kubelet gives a static pod that has none (upstream
 * pkg/kubelet/config/common.go applyDefaults): md5 over go-spew's `%#v` of
 * the decoded internal core.Pod (hash.DeepHashObject). In v1.20.2 the
 * "host:<node>" and "file:<path>" / "url:<url>" lines are written to the
 * hasher *before* DeepHashObject, which resets it, so they do not count: the
 * UID depends on the manifest's content only (verified against the Go
 * kubelet, see test/unit/static-pod-uid.test.ts).
 *
 * Same UID as the Go kubelet means a node moved between the two adopts its
 * static pods instead of killing and recreating them.
 */
import { createHash } from 'node:crypto';
import { defaultAndConvert, DecodeError, PodDecoder, UnreproducibleError } from './decode-pod.js';
import { GoSpew } from './go-spew.js';
import { GO_TYPES_1_20 } from './go-types-1.20.js';

export { UnreproducibleError } from './decode-pod.js';

const decoder = new PodDecoder(GO_TYPES_1_20);
const spew = new GoSpew(GO_TYPES_1_20);

/** go-spew `%#v` of the internal core.Pod the v1.20 kubelet decodes from `manifest` (a parsed YAML/JSON object). */
export function spewStaticPod(manifest: Record<string, unknown>): string {
  const pod = decoder.decode('core.Pod', manifest) as Record<string, unknown>;
  defaultAndConvert(pod, manifest);
  // The kubelet hashes a *core.Pod: the pointer's type header, then the struct.
  return `(*core.Pod)${spew.render('core.Pod', pod).slice('(core.Pod)'.length)}`;
}

/**
 * The v1.20 kubelet's UID for this manifest. Throws UnreproducibleError when
 * the in-memory form depends on the machine (a non-null timestamp), and
 * DecodeError when the Go kubelet could not decode the manifest at all.
 */
export function upstreamStaticPodUID(manifest: Record<string, unknown>): string {
  return createHash('md5').update(spewStaticPod(manifest)).digest('hex');
}

export function isUnreproducible(err: unknown): boolean {
  return err instanceof UnreproducibleError || err instanceof DecodeError;
}
