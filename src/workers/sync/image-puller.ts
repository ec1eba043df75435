/**
 * Makes the image of a container present according to its imagePullPolicy
 * (upstream images.imageManager.EnsureImageExists), in upstream's order:
 *  1. the reference gets the default tag `:latest` when it has neither tag
 *     nor digest (a reference that does not parse: InvalidImageName);
 *  2. ImageStatus (a failure: ImageInspectError), unless this thread found
 *     the image present moments ago and the policy is not Always
 *     (present-images.ts);
 *  3. present and not `Always`: done ("already present on machine");
 *     absent and `Never`: ErrImageNeverPull;
 *  4. within the pull backoff of (pod UID, image): ImagePullBackOff, without
 *     calling the runtime (10 s, doubling to 300 s, measured from the last
 *     failed pull);
 *  5. a pull slot (serialized or maxParallelImagePulls, node-wide), the
 *     registry QPS bucket ("pull QPS exceeded." counts as a failed pull),
 *     PullImage; a failure is ErrImagePull and advances the backoff.
 * Every failure also yields upstream's `Failed` / `Error: <reason>` event.
 */
import type { Container, Pod } from '../../api/pod.js';
import { applyDefaultImageTag } from '../../api/image-reference.js';
import type { Clock } from '../../common/clock.js';
import type { CriApi } from '../../cri/client.js';
import { CriError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { ImagePullQPSExceededError, type ImagePullGate } from '../../shared/image-pull-gate.js';
import { IMAGE_PULL_BACKOFF, isInBackOffSinceUpdate, next, formatGoDuration, type BackoffState } from '../../pod/backoff.js';
import type { PodEvent, RegistryAuth, SyncReason } from '../../pod/sync-types.js';
import type { PresentImages } from './present-images.js';

export type EnsureImageResult =
  | { ok: true; imageRef: string; backoff: BackoffState; events: PodEvent[] }
  | { ok: false; reason: SyncReason; backoff: BackoffState; events: PodEvent[] };

export interface EnsureImageOptions {
  /** Node-wide pull limits; absent: no limit. */
  gate?: ImagePullGate;
  /** For pull durations and the QPS bucket; absent: `now` throughout. */
  clock?: Clock;
  /**
   * Credentials from the pod's imagePullSecrets that match the image (upstream
   * keyring lookup): each is tried in turn until one pull succeeds; none or
   * empty: an anonymous pull.
   */
  auths?: RegistryAuth[];
  /** This thread's recent "present" answers; absent: ImageStatus every time. */
  presentImages?: PresentImages;
}

/** Upstream PullImage with a keyring: anonymous without credentials, else each in turn, the errors aggregated. */
async function pullWithCredentials(cri: CriApi, image: string, auths: RegistryAuth[] | undefined): Promise<string> {
  if (!auths || auths.length === 0) return (await cri.pullImage({ image: { image } })).imageRef;
  const errors: string[] = [];
  for (const auth of auths) {
    try {
      return (await cri.pullImage({ image: { image }, auth })).imageRef;
    } catch (err) {
      errors.push(errorText(err));
    }
  }
  throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
}

/** Upstream's image pull backoff key: `<pod UID>_<image as written>`. */
export function imageBackoffKey(pod: Pod, image: string): string {
  return `${pod.metadata.uid ?? ''}_${image}`;
}

/** The error text upstream shows for a failed CRI call (`rpc error: code = … desc = …`, without our operation prefix). */
function errorText(err: unknown): string {
  if (err instanceof CriError) return err.message.replace(/^[A-Za-z_]+: (?=rpc error:)/, '');
  return errorMessage(err);
}

function failure(reason: string, message: string, backoff: BackoffState, events: PodEvent[]): EnsureImageResult {
  // upstream startContainer: the event carries only the error's name.
  events.push({ type: 'Warning', reason: 'Failed', message: `Error: ${reason}` });
  return { ok: false, reason: { reason, message }, backoff, events };
}

export async function ensureImage(
  cri: CriApi,
  pod: Pod,
  container: Container,
  backoff: BackoffState,
  now: number,
  opts: EnsureImageOptions = {},
): Promise<EnsureImageResult> {
  const imgRef = container.image ?? '';
  const policy = container.imagePullPolicy ?? 'IfNotPresent';
  const events: PodEvent[] = [];
  const clockNow = () => opts.clock?.now() ?? now;

  let image: string;
  try {
    image = applyDefaultImageTag(imgRef);
  } catch (err) {
    const message = `Failed to apply default image tag ${JSON.stringify(imgRef)}: ${errorMessage(err)}`;
    events.push({ type: 'Warning', reason: 'InspectFailed', message });
    return failure('InvalidImageName', message, backoff, events);
  }

  const recent = policy === 'Always' ? undefined : opts.presentImages?.get(image, clockNow());
  let present: { id: string } | undefined = recent === undefined ? undefined : { id: recent };
  try {
    if (!present) {
      present = (await cri.imageStatus({ image: { image } })).image;
      if (present && policy !== 'Always') opts.presentImages?.remember(image, present.id, clockNow());
    }
  } catch (err) {
    const message = `Failed to inspect image ${JSON.stringify(imgRef)}: ${errorText(err)}`;
    events.push({ type: 'Warning', reason: 'InspectFailed', message });
    return failure('ImageInspectError', message, backoff, events);
  }
  if (policy !== 'Always' && present) {
    events.push({ type: 'Normal', reason: 'Pulled', message: `Container image ${JSON.stringify(imgRef)} already present on machine` });
    return { ok: true, imageRef: present.id, backoff, events };
  }
  if (policy === 'Never') {
    const message = `Container image ${JSON.stringify(imgRef)} is not present with pull policy of Never`;
    events.push({ type: 'Warning', reason: 'ErrImageNeverPull', message });
    return failure('ErrImageNeverPull', message, backoff, events);
  }

  const key = imageBackoffKey(pod, imgRef);
  if (isInBackOffSinceUpdate(backoff, key, now, IMAGE_PULL_BACKOFF)) {
    const message = `Back-off pulling image ${JSON.stringify(imgRef)}`;
    events.push({ type: 'Normal', reason: 'BackOff', message });
    return failure('ImagePullBackOff', message, backoff, events);
  }

  events.push({ type: 'Normal', reason: 'Pulling', message: `Pulling image ${JSON.stringify(imgRef)}` });
  const queued = clockNow();
  const release = opts.gate ? await opts.gate.acquire() : () => {};
  const started = clockNow();
  try {
    if (opts.gate && !opts.gate.tryAccept(started)) throw new ImagePullQPSExceededError();
    const imageRef = await pullWithCredentials(cri, image, opts.auths);
    const done = clockNow();
    events.push({
      type: 'Normal',
      reason: 'Pulled',
      message: `Successfully pulled image ${JSON.stringify(imgRef)} in ${formatGoDuration(done - started)} (${formatGoDuration(done - queued)} including waiting)`,
      pullMs: [queued, done],
    });
    return { ok: true, imageRef, backoff, events };
  } catch (err) {
    const failedAt = clockNow();
    events.push({ type: 'Warning', reason: 'Failed', message: `Failed to pull image ${JSON.stringify(imgRef)}: ${errorText(err)}` });
    return failure('ErrImagePull', errorText(err), next(backoff, key, failedAt, { policy: IMAGE_PULL_BACKOFF }), events);
  } finally {
    release();
  }
}
