import { describe, expect, it, vi } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { getBackoff, type BackoffState } from '../../src/pod/backoff.js';
import { ensureImage } from '../../src/workers/sync/image-puller.js';
import { PRESENT_TTL_MS, PresentImages } from '../../src/workers/sync/present-images.js';
import { CriError } from '../../src/common/errors.js';
import { ImagePullGate, imagePullLimits } from '../../src/shared/image-pull-gate.js';
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
    const c = p.spec.containers[0];
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
    const gaps = pullTimes.slice(1).map((t, i) => (t - pullTimes[i]) / S);
    expect(gaps.slice(0, 7)).toEqual([10, 20, 40, 80, 160, 300, 300]);
    expect(getBackoff(backoff, `uid-1_${UNPULLABLE}`)).toBe(300 * S);
  });

  it('a successful pull after a failure is not backed off again', async () => {
    const cri = new FakeCri();
    const image = 'registry.local/app:2';
    const p = pod(image, 'IfNotPresent');
    const c = p.spec.containers[0];
    const r1 = await ensureImage(cri.api, p, c, {}, T0);
    expect(r1.ok).toBe(false);
    cri.pullable.add(image);
    const r2 = await ensureImage(cri.api, p, c, r1.backoff, T0 + 5 * S);
    expect(r2.ok === false && r2.reason.reason).toBe('ImagePullBackOff');
    const r3 = await ensureImage(cri.api, p, c, r2.backoff, T0 + 10 * S);
    expect(r3.ok).toBe(true);
  });
});

describe('ensureImage: upstream EnsureImageExists details', () => {
  it('a reference without tag or digest is pulled and inspected as :latest (the name stays as written)', async () => {
    const cri = new FakeCri();
    cri.pullable.add('registry.local/app:latest');
    const r = await ensureImage(
      cri.api,
      pod('registry.local/app', 'IfNotPresent'),
      { name: 'app', image: 'registry.local/app', imagePullPolicy: 'IfNotPresent' },
      {},
      T0,
    );
    expect(r.ok).toBe(true);
    expect(cri.callsOf('imageStatus')).toEqual([{ image: { image: 'registry.local/app:latest' } }]);
    expect(cri.callsOf('pullImage')).toEqual([{ image: { image: 'registry.local/app:latest' } }]);
    expect(r.events.map((e) => e.message)).toEqual([
      'Pulling image "registry.local/app"',
      expect.stringMatching(/^Successfully pulled image "registry.local\/app" in /),
    ]);
  });

  it('a present image: Pulled "already present on machine"', async () => {
    const cri = new FakeCri();
    const image = 'docker.io/kubelet-ts/busybox:1.0';
    const r = await ensureImage(cri.api, pod(image), { name: 'app', image, imagePullPolicy: 'IfNotPresent' }, {}, T0);
    expect(r.events).toEqual([{ type: 'Normal', reason: 'Pulled', message: `Container image "${image}" already present on machine` }]);
  });

  it('an image found present moments ago is not asked about again (IfNotPresent, Never), Always asks each time, and the memory expires', async () => {
    const cri = new FakeCri();
    const image = 'docker.io/kubelet-ts/busybox:1.0';
    const presentImages = new PresentImages();
    const start = (policy: string, now: number) =>
      ensureImage(cri.api, pod(image), { name: 'app', image, imagePullPolicy: policy }, {}, now, { presentImages });
    const asked = () => cri.callsOf('imageStatus').length;
    const first = await start('IfNotPresent', T0);
    expect([first.ok && first.imageRef, asked()]).toEqual([`sha256:${image}`, 1]);
    const second = await start('Never', T0 + PRESENT_TTL_MS - 1);
    expect([second.ok && second.imageRef, asked()]).toEqual([`sha256:${image}`, 1]);
    expect(second.events).toEqual(first.events);
    await start('Always', T0 + 1);
    expect(asked()).toBe(2);
    await start('IfNotPresent', T0 + PRESENT_TTL_MS);
    expect(asked()).toBe(3);
    presentImages.forgetAll();
    await start('IfNotPresent', T0 + PRESENT_TTL_MS + 1);
    expect(asked()).toBe(4);
  });

  it('an absent image is not remembered: the next start asks again', async () => {
    const cri = new FakeCri();
    const image = 'registry.local/absent:1';
    const presentImages = new PresentImages();
    for (const now of [T0, T0 + 1]) {
      const r = await ensureImage(cri.api, pod(image), { name: 'app', image, imagePullPolicy: 'Never' }, {}, now, { presentImages });
      expect(r.ok === false && r.reason.reason).toBe('ErrImageNeverPull');
    }
    expect(cri.callsOf('imageStatus').length).toBe(2);
  });

  it.each<[string, string, string, string]>([
    ['an unparsable reference', 'Not A Valid:Ref', 'InvalidImageName', 'Failed to apply default image tag "Not A Valid:Ref": '],
    ['a failing ImageStatus', 'registry.local/broken:1', 'ImageInspectError', 'Failed to inspect image "registry.local/broken:1": '],
  ])('%s is %s with its event', async (_n, image, reason, prefix) => {
    const cri = new FakeCri();
    cri.handlers.imageStatus = async () => {
      throw new CriError('image_status: rpc error: code = Unknown desc = disk on fire', 'image_status', 2);
    };
    const r = await ensureImage(cri.api, pod(image), { name: 'app', image, imagePullPolicy: 'IfNotPresent' }, {}, T0);
    expect(r.ok === false && r.reason.reason).toBe(reason);
    expect(r.ok === false && r.reason.message.startsWith(prefix)).toBe(true);
    expect(r.events.map((e) => e.reason)).toEqual(['InspectFailed', 'Failed']);
    expect(r.events[1].message).toBe(`Error: ${reason}`);
  });

  it('a failed pull: the rpc error as message, events Failed "Failed to pull image" and "Error: ErrImagePull"', async () => {
    const cri = new FakeCri();
    const r = await ensureImage(cri.api, pod(UNPULLABLE), { name: 'app', image: UNPULLABLE, imagePullPolicy: 'IfNotPresent' }, {}, T0);
    expect(r.ok === false && r.reason).toEqual({ reason: 'ErrImagePull', message: 'rpc error: code = Unknown desc = pull failed' });
    expect(r.events.map((e) => e.message)).toEqual([
      `Pulling image "${UNPULLABLE}"`,
      `Failed to pull image "${UNPULLABLE}": rpc error: code = Unknown desc = pull failed`,
      'Error: ErrImagePull',
    ]);
  });

  it('serialized pulls: a second pull waits for the first (serializeImagePulls)', async () => {
    const cri = new FakeCri();
    const gate = ImagePullGate.create(
      imagePullLimits({ serializeImagePulls: true, maxParallelImagePulls: null, registryPullQPS: 0, registryBurst: 0 }),
      T0,
    );
    let finishFirst!: () => void;
    const order: string[] = [];
    cri.handlers.pullImage = async (r) => {
      const image = (r.image as { image: string }).image;
      order.push(`start ${image}`);
      if (image === 'a.local/one:1') await new Promise<void>((res) => (finishFirst = res));
      order.push(`end ${image}`);
      return { imageRef: image };
    };
    const c = (image: string) => ({ name: 'c', image, imagePullPolicy: 'Always' as const });
    const one = ensureImage(cri.api, pod('a.local/one:1'), c('a.local/one:1'), {}, T0, { gate });
    await vi.waitFor(() => expect(order).toEqual(['start a.local/one:1']));
    const two = ensureImage(cri.api, pod('a.local/two:1'), c('a.local/two:1'), {}, T0, { gate });
    await new Promise((res) => setTimeout(res, 20));
    expect(order).toEqual(['start a.local/one:1']);
    expect(gate.inFlight()).toBe(1);
    finishFirst();
    await Promise.all([one, two]);
    expect(order).toEqual(['start a.local/one:1', 'end a.local/one:1', 'start a.local/two:1', 'end a.local/two:1']);
    expect(gate.inFlight()).toBe(0);
  });

  it('maxParallelImagePulls and unlimited parallel pulls', () => {
    expect(imagePullLimits({ serializeImagePulls: false, maxParallelImagePulls: 3, registryPullQPS: 5, registryBurst: 10 })).toEqual({
      limit: 3,
      qps: 5,
      burst: 10,
    });
    expect(imagePullLimits({ serializeImagePulls: false, maxParallelImagePulls: null, registryPullQPS: 0, registryBurst: 10 }).limit).toBe(
      0,
    );
  });

  it('registryPullQPS/registryBurst: beyond the burst a pull fails at once with "pull QPS exceeded." and backs off', async () => {
    const cri = new FakeCri();
    const gate = ImagePullGate.create({ limit: 0, qps: 1, burst: 2 }, T0);
    const c = { name: 'c', image: 'docker.io/kubelet-ts/busybox:1.0', imagePullPolicy: 'Always' as const };
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await ensureImage(cri.api, pod(c.image), c, {}, T0, { gate }));
    expect(results.map((r) => r.ok)).toEqual([true, true, false]);
    expect(results[2].ok === false && results[2].reason).toEqual({ reason: 'ErrImagePull', message: 'pull QPS exceeded.' });
    expect(cri.callsOf('pullImage')).toHaveLength(2);
    // One token a second comes back.
    expect((await ensureImage(cri.api, pod(c.image), c, {}, T0 + 1000, { gate })).ok).toBe(true);
  });
});

describe('ensureImage: imagePullSecrets credentials (upstream keyring pull)', () => {
  const image = 'registry.local/private:1';
  const cases: [string, { username: string; password: string }[] | undefined, boolean, number][] = [
    ['no credentials: one anonymous pull', undefined, false, 1],
    ['the right credentials first', [{ username: 'u', password: 'right' }], true, 1],
    [
      'a wrong one, then the right one',
      [
        { username: 'u', password: 'wrong' },
        { username: 'u', password: 'right' },
      ],
      true,
      2,
    ],
    [
      'only wrong ones: every one is tried',
      [
        { username: 'u', password: 'a' },
        { username: 'u', password: 'b' },
      ],
      false,
      2,
    ],
  ];
  it.each(cases)('%s', async (_name, auths, ok, pulls) => {
    const cri = new FakeCri();
    cri.pullable.add(image);
    cri.acceptsAuth = (a) => a?.password === 'right';
    const p = pod(image, 'Always');
    const r = await ensureImage(cri.api, p, p.spec.containers[0], {}, T0, { auths });
    expect(r.ok).toBe(ok);
    // A successful pull's Pulled event carries its span, for the pod start SLI.
    expect(r.events.some((e) => e.reason === 'Pulled' && e.pullMs?.[0] === T0 && e.pullMs[1] === T0)).toBe(ok);
    expect(cri.callsOf('pullImage')).toHaveLength(pulls);
    if (auths)
      expect(cri.callsOf('pullImage').map((c) => (c.auth as { password: string }).password)).toEqual(
        auths.slice(0, pulls).map((a) => a.password),
      );
    if (!ok && pulls === 2)
      expect(r.ok === false && r.reason.message).toBe(
        '[rpc error: code = Unknown desc = 401 Unauthorized, rpc error: code = Unknown desc = 401 Unauthorized]',
      );
  });
});
