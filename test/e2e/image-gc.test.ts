/**
 * Image garbage collection on real containerd (image-gc-manager.ts): a
 * containerd of the test's own whose root (the image filesystem) is a 64 MiB
 * tmpfs, three unused images of 6 MiB (each about 12.6 MB on disk: the layer
 * blob and its unpacked snapshot) and a pod running busybox. The thresholds
 * are computed from the measured usage so that the third image pushes the
 * image fs over the high mark, and freeing down to the low mark takes the
 * two oldest images (by first detection) but not the newest; busybox (in use)
 * and the pause image (the runtime's sandbox image) must stay.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { PrivateContainerd } from '../helpers/private-containerd.js';
import { AgentProcess, podManifest } from './agent-harness.js';
import { describeE2E } from './e2e-env.js';

const run = promisify(execFile);
const BUILD = join(resolve(fileURLToPath(import.meta.url), '../../..'), 'scripts/build-oci-image.mjs');
const ROOT_BYTES = 64 * 1024 * 1024;
const PAD_BYTES = 6 * 1024 * 1024;
const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';
const PAUSE = 'docker.io/kubelet-ts/pause:1.0';

describeE2E('image garbage collection on containerd', () => {
  const id = randomUUID().slice(0, 6);
  const ns = `e2e-imggc-${id}`;
  const containerd = new PrivateContainerd(`igc${id.slice(0, 4)}`, 83, { rootBytes: ROOT_BYTES });
  const work = mkdtempSync(join(tmpdir(), 'kts-e2e-imggc-'));
  let cri: CriClient;
  let agent: AgentProcess | undefined;

  /** Bytes used on the image fs (statfs, as the agent sees it). */
  const used = () => {
    const s = statfsSync(containerd.rootDir);
    return (s.blocks - s.bavail) * s.bsize;
  };
  const imageIds = async () => new Map((await cri.listImages({})).images.flatMap((i) => i.repoTags.map((t) => [t, i.id] as const)));

  /** Builds and imports an image of one incompressible PAD_BYTES file; returns its id. */
  const importPadded = async (name: string): Promise<string> => {
    const dir = join(work, name);
    mkdirSync(join(dir, 'rootfs'), { recursive: true });
    writeFileSync(join(dir, 'rootfs/pad'), randomBytes(PAD_BYTES));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ Cmd: ['/pad'] }));
    const ref = `docker.io/kubelet-ts/gc-${name}:1.0`;
    const tar = join(dir, 'image.tar');
    await run(process.execPath, [
      BUILD,
      '--kind',
      'dir',
      '--rootfs',
      join(dir, 'rootfs'),
      '--config',
      join(dir, 'config.json'),
      '--ref',
      ref,
      '--out',
      tar,
    ]);
    await containerd.importImage(tar);
    const imageId = (await imageIds()).get(ref);
    if (!imageId) throw new Error(`${ref} is not listed after its import`);
    return imageId;
  };

  beforeAll(async () => {
    await containerd.up();
    cri = new CriClient({ runtimeEndpoint: containerd.endpoint, timeoutMs: 60_000 });
    await cri.waitForReady(30_000);
  }, 120_000);

  afterAll(async () => {
    await agent?.cleanup();
    cri?.close();
    await containerd.down();
    rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it('removes unused images oldest first down to the low threshold; keeps the in-use and sandbox images', async () => {
    const capacity = statfsSync(containerd.rootDir).blocks * statfsSync(containerd.rootDir).bsize;
    const before = used();
    const a = await importPadded('a');
    const perImage = used() - before;
    const size = Number((await cri.listImages({})).images.find((i) => i.id === a)!.size);
    // Usage with A, B and C; GC starts only with C, and must then free 1.5 images' worth (CRI sizes):
    // A alone is not enough, A and B are.
    const withAll = used() + 2 * perImage;
    const high = Math.floor(((used() + 1.5 * perImage) * 100) / capacity);
    const low = Math.floor(((withAll - 1.5 * size) * 100) / capacity);
    expect(low).toBeLessThan(high);

    agent = new AgentProcess(containerd.endpoint, `node-imggc-${id}`, ns, [
      '--image-gc-period=1s',
      '--minimum-image-ttl-duration=0s',
      `--image-gc-high-threshold=${high}`,
      `--image-gc-low-threshold=${low}`,
    ]);
    agent.writeManifest('app', podManifest('app', ns, [{ name: 'app', image: BUSYBOX, command: ['sh', '-c', 'sleep 3600'] }]));
    await agent.start();
    await agent.waitPod('the busybox pod running', 'app', (p) => p.status?.phase === 'Running');
    const detected = (imageId: string) => agent!.logs.some((l) => l.includes('Detected new images') && l.includes(imageId));
    await agent.until('the first detection (A present)', () => detected(a));

    const b = await importPadded('b');
    await agent.until('B detected', () => detected(b));
    const c = await importPadded('c');
    await agent.until('A and B removed', async () => {
      const present = new Set((await imageIds()).values());
      return !present.has(a) && !present.has(b);
    });

    const removals = agent.logs.filter((l) => l.includes('Removing image'));
    expect(removals.map((l) => [a, b, c].findIndex((x) => l.includes(x)))).toEqual([0, 1]);
    expect(agent.logs.some((l) => l.includes('over the high threshold'))).toBe(true);
    const present = await imageIds();
    expect([...present.keys()].sort()).toEqual([BUSYBOX, `docker.io/kubelet-ts/gc-c:1.0`, PAUSE].sort());
    const usagePercent = 100 - Math.floor(((capacity - used()) * 100) / capacity);
    expect(usagePercent).toBeLessThan(low);
    expect(agent.logs.some((l) => l.includes('FreeDiskSpaceFailed') || l.includes('failed to garbage collect'))).toBe(false);
    expect((await agent.pod('app'))?.status?.phase).toBe('Running');
  }, 120_000);
});
