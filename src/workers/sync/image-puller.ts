/**
 * Makes the image of a container present according to its imagePullPolicy
 * (upstream images.imageManager.EnsureImageExists): Never → must be present
 * (ErrImageNeverPull); IfNotPresent → pull when absent; Always → pull.
 * Failed pulls are backed off per (pod, image): within the backoff window the
 * result is ImagePullBackOff without calling the runtime.
 */
import type { Container, Pod } from '../../api/pod.js';
import type { CriApi } from '../../cri/client.js';
import { IMAGE_PULL_BACKOFF, getBackoff, isInBackOffSinceUpdate, next, formatGoDuration, type BackoffState } from './backoff.js';
import type { PodEvent, SyncReason } from './sync-types.js';

export type EnsureImageResult =
  | { ok: true; imageRef: string; backoff: BackoffState; events: PodEvent[] }
  | { ok: false; reason: SyncReason; backoff: BackoffState; events: PodEvent[] };

function imageBackoffKey(pod: Pod, image: string): string {
  return `image_${pod.metadata.uid ?? ''}_${image}`;
}

export async function ensureImage(
  cri: CriApi,
  pod: Pod,
  container: Container,
  backoff: BackoffState,
  now: number,
): Promise<EnsureImageResult> {
  const image = container.image ?? '';
  const policy = container.imagePullPolicy ?? 'IfNotPresent';
  const present = (await cri.imageStatus({ image: { image } })).image;
  if (present && policy !== 'Always') {
    return { ok: true, imageRef: present.id, backoff, events: [] };
  }
  if (policy === 'Never') {
    const message = `Container image "${image}" is not present with pull policy of Never`;
    return {
      ok: false,
      reason: { reason: 'ErrImageNeverPull', message },
      backoff,
      events: [{ type: 'Warning', reason: 'ErrImageNeverPull', message }],
    };
  }
  const key = imageBackoffKey(pod, image);
  if (isInBackOffSinceUpdate(backoff, key, now, IMAGE_PULL_BACKOFF)) {
    const message = `Back-off pulling image "${image}"`;
    return {
      ok: false,
      reason: { reason: 'ImagePullBackOff', message },
      backoff,
      events: [{ type: 'Normal', reason: 'BackOff', message }],
    };
  }
  const events: PodEvent[] = [{ type: 'Normal', reason: 'Pulling', message: `Pulling image "${image}"` }];
  const start = now;
  try {
    const pulled = await cri.pullImage({ image: { image } });
    events.push({ type: 'Normal', reason: 'Pulled', message: `Successfully pulled image "${image}"` });
    return { ok: true, imageRef: pulled.imageRef, backoff, events };
  } catch (err) {
    const next_ = next(backoff, key, start, { policy: IMAGE_PULL_BACKOFF });
    const message = `Failed to pull image "${image}": ${err instanceof Error ? err.message : String(err)}`;
    events.push({ type: 'Warning', reason: 'Failed', message });
    events.push({
      type: 'Warning',
      reason: 'Failed',
      message: `Error: ErrImagePull (next attempt in ${formatGoDuration(getBackoff(next_, key))})`,
    });
    return { ok: false, reason: { reason: 'ErrImagePull', message }, backoff: next_, events };
  }
}
