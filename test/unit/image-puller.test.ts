import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { getBackoff, type BackoffState } from '../../src/workers/sync/backoff.js';
import { ensureImage } from '../../src/workers/sync/image-puller.js';
import { FakeCri } from '../fakes/fake-cri.js';

const T0 = 1_700_000_000_000;
const S = 1000;
const UNPULLABLE = '127.0.0.1:1/none:1';

function pod(image: string, imagePullPolicy?: string): Pod {
  return PodSchema.parse({
    metadata: { name: 'p', namespace: 'default', uid: 'uid-1' },
    spec: { containers: [{ name: 'app', image, ...(imagePullPolicy ? { imagePullPolicy } : {}) }] },
  });
}

describe('ensureImage: ImagePullBackOff (upstream IsInBackOffSinceUpdate)', () => {
  it('retries after 10 s, 20 s, 40 s … measured from the last failed pull, capped at 300 s', async () => {
    const cri = new FakeCri();
    const p = pod(UNPULLABLE, 'IfNotPresent');
    const c = p.spec.containers![0]!;
    let backoff: BackoffState = {};
    let now = T0;
    const pullTimes: number[] = [];
    // Sync every second for 20 minutes; record when a pull is actually attempted.
    for (let i = 0; i < 1200; i++, now += S) {
      const before = cri.callsOf('pullImage').length;
      const r = await ensureImage(cri.api, p, c, backoff, now);
      backoff = r.backoff;
      expect(r.ok).toBe(false);
      if (cri.callsOf('pullImage').length > before) {
        pullTimes.push(now);
        expect(r.ok === false && r.reason.reason).toBe('ErrImagePull');
      } else {
        expect(r.ok === false && r.reason.reason).toBe('ImagePullBackOff');
      }
    }
    const gaps = pullTimes.slice(1).map((t, i) => (t - pullTimes[i]!) / S);
    expect(gaps.slice(0, 7)).toEqual([10, 20, 40, 80, 160, 300, 300]);
    expect(getBackoff(backoff, `image_uid-1_${UNPULLABLE}`)).toBe(300 * S);
  });

  it('a successful pull after a failure is not backed off again', async () => {
    const cri = new FakeCri();
    const image = 'registry.local/app:2';
    const p = pod(image, 'IfNotPresent');
    const c = p.spec.containers![0]!;
    const r1 = await ensureImage(cri.api, p, c, {}, T0);
    expect(r1.ok).toBe(false);
    cri.pullable.add(image);
    const r2 = await ensureImage(cri.api, p, c, r1.backoff, T0 + 5 * S);
    expect(r2.ok === false && r2.reason.reason).toBe('ImagePullBackOff');
    const r3 = await ensureImage(cri.api, p, c, r2.backoff, T0 + 10 * S);
    expect(r3.ok).toBe(true);
  });
});
