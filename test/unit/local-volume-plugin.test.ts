import { access, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { silentLogger } from '../../src/common/logger.js';
import { LinuxMounter, type MountInfo, type Mounter } from '../../src/common/mounter.js';
import type { PersistentSpec } from '../../src/main/volumes/claim-resolver.js';
import { localVolumePlugin, mountRefs } from '../../src/main/volumes/local-volume-plugin.js';
import type { VolumeHost } from '../../src/main/volumes/volume-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

const info = (mountPoint: string, root: string, device = '8:1'): MountInfo => ({
  id: 1,
  parentId: 0,
  device,
  root,
  mountPoint,
  options: [],
  optional: [],
  fsType: 'ext4',
  source: '/dev/sda1',
  superOptions: [],
});

describe('mountRefs (upstream GetMountRefs)', () => {
  it('finds the other mounts of the same directory of the same filesystem', () => {
    const mounts = [
      info('/', '/'),
      info('/srv', '/', '8:2'),
      info('/var/lib/k/pods/a/volumes/v/pv', '/data/d', '8:2'),
      info('/var/lib/k/pods/b/volumes/v/pv', '/data/d', '8:2'),
      info('/elsewhere', '/data/d', '8:1'),
      info('/other', '/data/e', '8:2'),
    ];
    expect(mountRefs(mounts, '/srv/data/d')).toEqual(['/var/lib/k/pods/a/volumes/v/pv', '/var/lib/k/pods/b/volumes/v/pv']);
    expect(mountRefs(mounts, '/var/lib/k/pods/a/volumes/v/pv')).toEqual(['/var/lib/k/pods/b/volumes/v/pv']);
    expect(mountRefs(mounts, '/tmp/x')).toEqual([]);
  });
});

describe('local PersistentVolumes (upstream pkg/volume/local)', () => {
  let root: string;
  let data: string;
  let events: string[];
  const pod = (uid: string, fsGroup?: number): Pod => ({
    metadata: { uid, name: `p-${uid}`, namespace: 'ns' },
    spec: { containers: [], securityContext: fsGroup === undefined ? undefined : { fsGroup } },
  });
  const spec = (path: string, readOnly = false, mountOptions?: string[]): PersistentSpec => ({
    pv: { metadata: { name: 'pv-1' }, spec: { local: { path }, mountOptions } },
    readOnly,
    claim: 'ns/c',
  });
  const hostWith = (mounter: Mounter): VolumeHost => ({
    rootDir: root,
    mounter,
    clock: new FakeClock(),
    logger: silentLogger(),
    nodeAllocatable: { cpu: '1', memory: '1Gi' },
    recorder: { record: (ref, type, reason, message) => events.push(`${ref.name} ${type} ${reason} ${message}`) },
  });
  const dirOf = (uid: string) => join(root, 'pods', uid, 'volumes/kubernetes.io~local-volume/pv-1');
  const vol = { name: 'data', persistentVolumeClaim: { claimName: 'c' } };

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-local-'));
    data = join(root, 'disk');
    await mkdir(data);
    await writeFile(join(data, 'f'), 'x', { mode: 0o600 });
    events = [];
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('bind-mounts the PV path at volumes/kubernetes.io~local-volume/<pv>, read-only with the claim, with mountOptions; once', async () => {
    const mounter = new FakeMounter();
    const host = hostWith(mounter);
    expect(await localVolumePlugin.setUp(pod('u1'), vol, host, spec(data, true, ['noexec']))).toEqual({
      path: dirOf('u1'),
      readOnly: true,
    });
    expect(mounter.calls).toEqual([`mount -t none bind,ro,noexec ${data} ${dirOf('u1')}`]);
    expect((await stat(dirOf('u1'))).mode & 0o777).toBe(0o750);
    await localVolumePlugin.setUp(pod('u1'), vol, host, spec(data, true));
    expect(mounter.calls).toHaveLength(1);
  });

  it('tears down by PV name: unmounts and removes the mount point; idempotent', async () => {
    const mounter = new FakeMounter();
    const host = hostWith(mounter);
    await localVolumePlugin.setUp(pod('u1'), vol, host, spec(data));
    await localVolumePlugin.tearDown('u1', 'pv-1', host);
    expect(mounter.calls.at(-1)).toBe(`umount ${dirOf('u1')}`);
    await expect(access(dirOf('u1'))).rejects.toThrow(/ENOENT/);
    await localVolumePlugin.tearDown('u1', 'pv-1', host);
    expect(await stat(join(data, 'f'))).toBeTruthy();
  });

  it.each([
    ['an empty path', '', 'LocalVolume volume "pv-1" path is empty'],
    ['a path with ..', '/mnt/../etc', "invalid path: /mnt/../etc must not contain '..'"],
    ['a missing path', '/nonexistent/kts', 'local volume path /nonexistent/kts of PersistentVolume "pv-1": ENOENT'],
    ['a file', '/dev/null', 'local volume path /dev/null of PersistentVolume "pv-1" is not a directory'],
  ])('%s is refused with a clear message and nothing mounted', async (_name, path, message) => {
    const mounter = new FakeMounter();
    await expect(localVolumePlugin.setUp(pod('u1'), vol, hostWith(mounter), spec(path))).rejects.toThrow(message);
    expect(mounter.calls).toEqual([]);
  });

  it('a failed mount leaves no mount point', async () => {
    const mounter = new FakeMounter();
    mounter.failNext.mount = 'mount: permission denied';
    await expect(localVolumePlugin.setUp(pod('u1'), vol, hostWith(mounter), spec(data))).rejects.toThrow('permission denied');
    await expect(access(dirOf('u1'))).rejects.toThrow(/ENOENT/);
  });

  it('warns (AlreadyMountedVolume) when another pod mounts the volume with another group', async () => {
    const mounter = new FakeMounter();
    const host = hostWith(mounter);
    await localVolumePlugin.setUp(pod('u1'), vol, host, spec(data));
    // The fake records the bind with root "/" and one device: make it look like a bind of `data`.
    const m = (await mounter.list())[0];
    const base = { ...m, mountPoint: '/', root: '/', id: 1 };
    mounter.mounts.splice(0, 1, base, { ...m, root: data });
    await localVolumePlugin.setUp(pod('u2', 4321), vol, host, spec(data));
    expect(events).toEqual([
      `p-u2 Warning AlreadyMountedVolume The requested fsGroup is 4321, but the volume pv-1 has GID ${(await stat(data)).gid}. The volume may not be shareable.`,
    ]);
  });
});

describe.runIf(process.getuid?.() === 0)('local PersistentVolumes with real bind mounts (root)', () => {
  let root: string;
  let data: string;
  const mounter = new LinuxMounter();
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-local-real-'));
    data = join(root, 'disk');
    await mkdir(join(data, 'sub'), { recursive: true });
    await writeFile(join(data, 'sub/f'), 'x', { mode: 0o600 });
  });
  afterEach(async () => {
    for (const m of (await mounter.list()).filter((x) => x.mountPoint.startsWith(`${root}/`)).reverse())
      await mounter.unmount(m.mountPoint);
    await rm(root, { recursive: true, force: true });
  });
  const host = (): VolumeHost => ({
    rootDir: root,
    mounter,
    clock: new FakeClock(),
    logger: silentLogger(),
    nodeAllocatable: { cpu: '1', memory: '1Gi' },
  });
  const pod = (uid: string, fsGroup?: number): Pod => ({
    metadata: { uid, name: uid, namespace: 'ns' },
    spec: { containers: [], securityContext: { fsGroup } },
  });
  const spec = (readOnly: boolean): PersistentSpec => ({
    pv: { metadata: { name: 'pv-r' }, spec: { local: { path: data } } },
    readOnly,
    claim: 'ns/c',
  });
  const vol = { name: 'data', persistentVolumeClaim: { claimName: 'c' } };

  it('the first writable mount applies fsGroup to the PV files; data outlives the teardown', async () => {
    const { path } = await localVolumePlugin.setUp(pod('u1', 2000), vol, host(), spec(false));
    expect((await mounter.list()).some((m) => m.mountPoint === path)).toBe(true);
    await writeFile(join(path, 'written'), 'kept');
    expect((await stat(join(data, 'sub/f'))).gid).toBe(2000);
    expect((await stat(join(data, 'sub/f'))).mode & 0o777).toBe(0o660);
    expect((await stat(join(data, 'sub'))).mode & 0o7777).toBe(0o2775); // 0755 + group rwx + setgid
    await localVolumePlugin.tearDown('u1', 'pv-r', host());
    expect((await mounter.list()).some((m) => m.mountPoint === path)).toBe(false);
    expect(await import('node:fs/promises').then((f) => f.readFile(join(data, 'written'), 'utf8'))).toBe('kept');
  });

  it('a read-only claim mounts read-only and changes no ownership', async () => {
    const { path, readOnly } = await localVolumePlugin.setUp(pod('u2', 2000), vol, host(), spec(true));
    expect(readOnly).toBe(true);
    await expect(writeFile(join(path, 'nope'), 'x')).rejects.toThrow(/EROFS/);
    expect((await stat(join(data, 'sub/f'))).gid).not.toBe(2000);
    await localVolumePlugin.tearDown('u2', 'pv-r', host());
  });
});
