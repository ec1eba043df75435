import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Volume } from '../../src/api/core-v1.js';
import type { Pod } from '../../src/api/pod.js';
import { silentLogger } from '../../src/common/logger.js';
import type { EventRecorder } from '../../src/main/events/event-recorder.js';
import { ATTACH_MOUNT_TIMEOUT_MS, VolumeManager } from '../../src/main/volumes/volume-manager.js';
import type { ObjectRef, VolumeHost, VolumePlugin } from '../../src/main/volumes/volume-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

/** A plugin for `emptyDir` (name "fake/disk") or `configMap` (name "fake/remount") volumes that records its calls. */
class FakePlugin implements VolumePlugin {
  readonly calls: string[] = [];
  failures = 0;
  failWith = 'boom';
  constructor(
    readonly name: string,
    readonly requiresRemount: boolean,
    private readonly source: 'emptyDir' | 'configMap',
  ) {}
  canSupport = (v: Volume) => v[this.source] !== undefined;
  check = (_p: Pod, v: Volume) => (v.configMap?.name === 'refused' ? 'needs an apiserver' : undefined);
  references = (p: Pod, v: Volume): ObjectRef[] =>
    v.configMap ? [{ kind: 'configmap', namespace: p.metadata.namespace ?? '', name: v.configMap.name ?? '' }] : [];
  async setUp(pod: Pod, v: Volume) {
    this.calls.push(`setUp ${pod.metadata.uid}/${v.name}`);
    if (this.failures > 0) {
      this.failures--;
      throw new Error(this.failWith);
    }
    return { path: `/host/${v.name}`, readOnly: this.requiresRemount };
  }
  async tearDown(uid: string, name: string) {
    this.calls.push(`tearDown ${uid}/${name}`);
  }
}

const pod = (uid: string, volumes: Record<string, unknown>[], mounted = volumes.map((v) => v.name as string)): Pod => ({
  metadata: { uid, name: `p-${uid}`, namespace: 'ns' },
  spec: {
    volumes: volumes as never,
    containers: [{ name: 'c', image: 'i', volumeMounts: mounted.map((n) => ({ name: n, mountPath: `/m/${n}` })) }],
  },
});

/** Lets real file-system calls and the microtask-driven reconciler run (the fake clock does not move). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
};

describe('VolumeManager', () => {
  let root: string;
  let clock: FakeClock;
  let disk: FakePlugin;
  let remount: FakePlugin;
  let events: string[];
  let observed: string[];
  let registered: Map<string, number>;
  let changed: (ref: ObjectRef) => void;
  let vm: VolumeManager;
  let mounter: FakeMounter;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-vm-'));
    clock = new FakeClock();
    disk = new FakePlugin('fake/disk', false, 'emptyDir');
    remount = new FakePlugin('fake/remount', true, 'configMap');
    events = [];
    observed = [];
    registered = new Map();
    const recorder: EventRecorder = { record: (ref, type, reason, message) => events.push(`${ref.name} ${type} ${reason} ${message}`) };
    const host: VolumeHost = {
      rootDir: root,
      mounter: (mounter = new FakeMounter()),
      clock,
      logger: silentLogger(),
      nodeAllocatable: { cpu: '1', memory: '1Gi' },
      objects: {
        register: (r) => registered.set(r.name, (registered.get(r.name) ?? 0) + 1),
        unregister: (r) => registered.set(r.name, (registered.get(r.name) ?? 0) - 1),
        onChange: (l) => (changed = l),
        get: () => Promise.reject(new Error('unused')),
      },
    };
    vm = new VolumeManager({
      host,
      plugins: [disk, remount],
      recorder,
      clock,
      logger: silentLogger(),
      metrics: { observe: (plugin, op, ok) => observed.push(`${plugin} ${op} ${ok ? 'success' : 'fail-unknown'}`) },
    });
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('sets up only the mounted volumes, creates the pod directories and returns the volume map', async () => {
    const p = pod(
      'u1',
      [
        { name: 'a', emptyDir: {} },
        { name: 'b', configMap: { name: 'cm' } },
        { name: 'unused', emptyDir: {} },
      ],
      ['a', 'b'],
    );
    const map = await vm.waitForAttachAndMount(p);
    expect(map).toEqual({ a: { path: '/host/a', readOnly: false }, b: { path: '/host/b', readOnly: true } });
    expect([...disk.calls, ...remount.calls].sort()).toEqual(['setUp u1/a', 'setUp u1/b']);
    expect((await stat(join(root, 'pods/u1/volumes'))).isDirectory()).toBe(true);
    expect((await stat(join(root, 'pods/u1/plugins'))).isDirectory()).toBe(true);
    expect(observed.sort()).toEqual(['fake/disk volume_mount success', 'fake/remount volume_mount success']);
    expect(registered.get('cm')).toBe(1);
  });

  it('a pod directory that cannot be made is an error naming the directory, the path and the cause', async () => {
    await rm(join(root, 'pods'), { recursive: true, force: true });
    await writeFile(join(root, 'pods'), '');
    await expect(vm.waitForAttachAndMount(pod('u1', []))).rejects.toMatchObject({
      code: 'KTS_ERR_FS',
      errno: 'ENOTDIR',
      message: `cannot create the pod volumes directory ${join(root, 'pods/u1/volumes')}: mkdir ${join(root, 'pods/u1')}: not a directory (ENOTDIR)`,
    });
  });

  it.each([
    [
      'an unsupported source',
      { name: 'share', nfs: { server: 'nfs.example', path: '/' } },
      'volume "share": nfs volumes are not supported by kubelet-ts',
    ],
    ['a plugin check', { name: 'cfg', configMap: { name: 'refused' } }, 'volume "cfg": needs an apiserver'],
  ])('rejects at once for %s', async (_name, volume, msg) => {
    await expect(vm.waitForAttachAndMount(pod('u1', [volume]))).rejects.toThrow(msg);
  });

  it('a failed setUp is a FailedMount event and is retried after 500 ms backoff', async () => {
    disk.failures = 1;
    disk.failWith = 'configmap "x" not found';
    let done = false;
    const waiting = vm.waitForAttachAndMount(pod('u1', [{ name: 'a', emptyDir: {} }])).then((m) => ((done = true), m));
    await settle();
    expect(events).toEqual(['p-u1 Warning FailedMount MountVolume.SetUp failed for volume "a" : configmap "x" not found']);
    expect(done).toBe(false);
    clock.step(499);
    await settle();
    expect(disk.calls).toHaveLength(1);
    clock.step(1);
    await settle();
    expect(await waiting).toEqual({ a: { path: '/host/a', readOnly: false } });
    expect(observed).toEqual(['fake/disk volume_mount fail-unknown', 'fake/disk volume_mount success']);
  });

  it('backoff doubles up to 2 min 2 s', async () => {
    disk.failures = 100;
    const waiting = vm.waitForAttachAndMount(pod('u1', [{ name: 'a', emptyDir: {} }])).catch((e: Error) => e);
    const attemptsAt: number[] = [];
    await settle();
    const start = clock.now();
    for (let t = 0; t < 400_000; t += 250) {
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      while (attemptsAt.length < disk.calls.length) attemptsAt.push(clock.now() - start);
      clock.step(250);
    }
    const gaps = attemptsAt.slice(1).map((t, i) => t - attemptsAt[i]);
    expect(gaps.slice(0, 5)).toEqual([500, 1000, 2000, 4000, 8000]);
    expect(Math.max(...gaps)).toBe(122_000);
    expect(((await waiting) as Error).message).toBe(
      'unmounted volumes=[a], unattached volumes=[], failed to process volumes=[]: timed out waiting for the condition',
    );
  });

  it('times out after 2 min 3 s, naming the unmounted volumes', async () => {
    disk.failures = 1000;
    const waiting = vm
      .waitForAttachAndMount(
        pod('u1', [
          { name: 'b', emptyDir: {} },
          { name: 'a', emptyDir: {} },
        ]),
      )
      .catch((e: Error) => e);
    await settle();
    clock.step(ATTACH_MOUNT_TIMEOUT_MS - 1);
    await settle();
    clock.step(1);
    expect(((await waiting) as Error).message).toMatch(/^unmounted volumes=\[a b\]/);
  });

  it('an aborted wait rejects without an event', async () => {
    disk.failures = 1000;
    const ac = new AbortController();
    const waiting = vm.waitForAttachAndMount(pod('u1', [{ name: 'a', emptyDir: {} }]), ac.signal).catch((e: Error) => e);
    await settle();
    events.length = 0;
    ac.abort(new Error('pod sync cancelled'));
    expect(((await waiting) as Error).message).toBe('pod sync cancelled');
    expect(events).toEqual([]);
  });

  it('each later sync remounts the volumes whose plugin requires it, without waiting for it', async () => {
    const p = pod('u1', [
      { name: 'a', emptyDir: {} },
      { name: 'b', configMap: { name: 'cm' } },
    ]);
    await vm.waitForAttachAndMount(p);
    remount.failures = 1;
    await expect(vm.waitForAttachAndMount(p)).resolves.toEqual({
      a: { path: '/host/a', readOnly: false },
      b: { path: '/host/b', readOnly: true },
    });
    await settle();
    expect(disk.calls).toEqual(['setUp u1/a']);
    expect(remount.calls).toEqual(['setUp u1/b', 'setUp u1/b']);
    expect(events).toHaveLength(1);
    expect(registered.get('cm')).toBe(1);
  });

  it('waitForUnmount tears every volume down and forgets the pod', async () => {
    await vm.waitForAttachAndMount(
      pod('u1', [
        { name: 'a', emptyDir: {} },
        { name: 'b', configMap: { name: 'cm' } },
      ]),
    );
    expect(vm.hasVolumes('u1')).toBe(true);
    await vm.waitForUnmount('u1');
    expect([...disk.calls, ...remount.calls].filter((c) => c.startsWith('tearDown')).sort()).toEqual(['tearDown u1/a', 'tearDown u1/b']);
    expect(vm.hasVolumes('u1')).toBe(false);
    expect(vm.uids()).toEqual([]);
    expect(registered.get('cm')).toBe(0);
  });

  it('volumes left on disk wait for their pod: claimed by a sync, or torn down once housekeeping releases them', async () => {
    await mkdir(join(root, 'pods/u1/volumes/fake~disk/a'), { recursive: true });
    await mkdir(join(root, 'pods/u2/volumes/fake~disk/gone'), { recursive: true });
    await mkdir(join(root, 'pods/u3/volumes/other~plugin/x'), { recursive: true });
    expect(await vm.reconstruct()).toBe(2);
    await settle();
    expect(disk.calls).toEqual([]);
    expect(vm.hasVolumes('u2')).toBe(true);

    await vm.waitForAttachAndMount(pod('u1', [{ name: 'a', emptyDir: {} }]));
    expect(disk.calls).toEqual(['setUp u1/a']);

    vm.releaseOrphans((uid) => uid === 'u1');
    await settle();
    await vm.idle();
    expect(disk.calls).toEqual(['setUp u1/a', 'tearDown u2/gone']);
    expect(vm.hasVolumes('u2')).toBe(false);
  });

  it('a change of a referenced object remounts its volumes at once and retries a failing one without backoff', async () => {
    const p = pod('u1', [
      { name: 'a', emptyDir: {} },
      { name: 'b', configMap: { name: 'cm' } },
    ]);
    await vm.waitForAttachAndMount(p);
    changed({ kind: 'configmap', namespace: 'ns', name: 'other' });
    await settle();
    expect(remount.calls).toEqual(['setUp u1/b']);
    changed({ kind: 'configmap', namespace: 'ns', name: 'cm' });
    await settle();
    expect(remount.calls).toEqual(['setUp u1/b', 'setUp u1/b']);
    expect(disk.calls).toEqual(['setUp u1/a']);

    remount.failures = 1;
    const q = pod('u2', [{ name: 'c', configMap: { name: 'late' } }]);
    const waiting = vm.waitForAttachAndMount(q);
    await settle();
    expect(events.at(-1)).toContain('MountVolume.SetUp failed for volume "c"');
    changed({ kind: 'configmap', namespace: 'ns', name: 'late' });
    await expect(waiting).resolves.toEqual({ c: { path: '/host/c', readOnly: true } });
  });

  it('the first pod asking for mount propagation makes the root directory rshared, once', async () => {
    const withProp = (uid: string) => {
      const p = pod(uid, [{ name: 'a', emptyDir: {} }]);
      p.spec.containers[0].volumeMounts![0].mountPropagation = 'HostToContainer';
      return p;
    };
    await vm.waitForAttachAndMount(pod('u0', [{ name: 'a', emptyDir: {} }]));
    expect(mounter.calls).toEqual([]);
    await vm.waitForAttachAndMount(withProp('u1'));
    await vm.waitForAttachAndMount(withProp('u2'));
    expect(mounter.calls).toEqual([`bind ${root} ${root}`, `make-rshared ${root}`]);
  });

  it('close() releases every waiter and stops retrying', async () => {
    disk.failures = 1000;
    const waiting = vm.waitForAttachAndMount(pod('u1', [{ name: 'a', emptyDir: {} }])).catch((e: Error) => e);
    await settle();
    vm.close();
    expect(((await waiting) as Error).message).toBe('the volume manager is stopping');
    // No retry or wait timer is left to keep the process alive, and nothing runs any more.
    expect(clock.pendingTimers()).toBe(0);
    clock.step(200_000);
    await settle();
    expect(disk.calls).toHaveLength(1);
  });

  it('after close() a new wait (a pod terminating during shutdown) fails at once instead of timing out', async () => {
    await vm.waitForAttachAndMount(pod('u1', [{ name: 'a', emptyDir: {} }]));
    vm.close();
    await expect(vm.waitForUnmount('u1')).rejects.toThrow('the volume manager is stopping');
    expect(clock.pendingTimers()).toBe(0);
  });
});
