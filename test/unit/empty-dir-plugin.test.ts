import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { silentLogger } from '../../src/common/logger.js';
import { emptyDirPlugin, memoryVolumeSizeBytes, podMemoryLimitBytes } from '../../src/main/volumes/empty-dir-plugin.js';
import type { VolumeHost } from '../../src/main/volumes/volume-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

const GI = 1024n ** 3n;
const mi = (n: number) => BigInt(n) * 1024n * 1024n;

function pod(limits: (string | undefined)[], init: (string | undefined)[] = []): Pod {
  const c = (l: string | undefined, i: number) => ({ name: `c${i}`, image: 'x', resources: l ? { limits: { memory: l } } : {} });
  return { metadata: { uid: 'uid-1', name: 'p', namespace: 'ns' }, spec: { containers: limits.map(c), initContainers: init.map(c) } };
}

describe('memory-backed volume size (upstream calculateEmptyDirMemorySize)', () => {
  it.each([
    ['node allocatable when nothing else is set', pod([undefined]), undefined, 8n * GI],
    ['the pod limit when every container has one', pod(['1Gi', '512Mi']), undefined, GI + mi(512)],
    ['no pod limit when one container has none', pod(['1Gi', undefined]), undefined, 8n * GI],
    ['an init container above the sum', pod(['1Gi'], ['2Gi']), undefined, 2n * GI],
    ['sizeLimit below the pod limit', pod(['1Gi']), '64Mi', mi(64)],
    ['sizeLimit above the pod limit is ignored', pod(['1Gi']), '4Gi', GI],
    ['a zero sizeLimit is ignored', pod([undefined]), '0', 8n * GI],
  ])('%s', (_name, p, sizeLimit, want) => {
    expect(memoryVolumeSizeBytes('8Gi', p, sizeLimit)).toBe(want);
  });

  it('podMemoryLimitBytes is undefined without containers', () => {
    expect(podMemoryLimitBytes(pod([]))).toBeUndefined();
  });
});

describe('emptyDir plugin', () => {
  let root: string;
  let mounter: FakeMounter;
  let host: VolumeHost;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-ed-'));
    mounter = new FakeMounter();
    host = { rootDir: root, mounter, clock: new FakeClock(), logger: silentLogger(), nodeAllocatable: { cpu: '2', memory: '1Gi' } };
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const volDir = (name: string) => join(root, 'pods/uid-1/volumes/kubernetes.io~empty-dir', name);

  it('on disk: a 0777 directory and a ready file; setting up again changes nothing', async () => {
    const got = await emptyDirPlugin.setUp(pod([undefined]), { name: 'data', emptyDir: {} }, host);
    expect(got).toEqual({ path: volDir('data'), readOnly: false });
    expect((await stat(volDir('data'))).mode & 0o777).toBe(0o777);
    expect((await stat(join(root, 'pods/uid-1/plugins/kubernetes.io~empty-dir/data/ready'))).isFile()).toBe(true);
    await writeFile(join(volDir('data'), 'kept'), 'x');
    await emptyDirPlugin.setUp(pod([undefined]), { name: 'data', emptyDir: {} }, host);
    expect((await stat(join(volDir('data'), 'kept'))).isFile()).toBe(true);
    expect(mounter.calls).toEqual([]);
  });

  it('Memory: one tmpfs mount with the size, never a second one; teardown unmounts and removes', async () => {
    const v = { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } };
    await emptyDirPlugin.setUp(pod([undefined]), v, host);
    await emptyDirPlugin.setUp(pod([undefined]), v, host);
    expect(mounter.calls).toEqual([`mount -t tmpfs size=${mi(64)} tmpfs ${volDir('mem')}`]);
    await emptyDirPlugin.tearDown('uid-1', 'mem', host);
    expect(mounter.mounts).toEqual([]);
    await expect(stat(volDir('mem'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(root, 'pods/uid-1/plugins/kubernetes.io~empty-dir/mem'))).rejects.toThrow(/ENOENT/);
    // Idempotent.
    await emptyDirPlugin.tearDown('uid-1', 'mem', host);
  });

  it('Memory after a restart: the ready file and the mount are found, nothing is mounted again', async () => {
    const v = { name: 'mem', emptyDir: { medium: 'Memory' } };
    await emptyDirPlugin.setUp(pod([undefined]), v, host);
    const again = new FakeMounter();
    again.mounts.push(...mounter.mounts);
    await emptyDirPlugin.setUp(pod([undefined]), v, { ...host, mounter: again });
    expect(again.calls).toEqual([]);
  });

  it.each([
    ['HugePages-2Mi', 'huge pages are not supported'],
    ['Disk', 'unknown storage medium "Disk"'],
  ])('medium %s is refused: %s', (medium, msg) => {
    expect(emptyDirPlugin.check!(pod([undefined]), { name: 'x', emptyDir: { medium } }, host)).toContain(msg);
  });

  it('teardown refuses a directory with something mounted below it', async () => {
    await emptyDirPlugin.setUp(pod([undefined]), { name: 'data', emptyDir: {} }, host);
    mounter.mounts.push({
      id: 1,
      parentId: 0,
      device: '8:1',
      root: '/',
      mountPoint: `${volDir('data')}/inner`,
      options: [],
      optional: [],
      fsType: 'ext4',
      source: '/dev/sda1',
      superOptions: [],
    });
    await expect(emptyDirPlugin.tearDown('uid-1', 'data', host)).rejects.toThrow(/mounted below it/);
  });
});
