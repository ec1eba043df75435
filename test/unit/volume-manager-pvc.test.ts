import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PersistentVolume, PersistentVolumeClaim, Volume } from '../../src/api/core-v1.js';
import type { Pod } from '../../src/api/pod.js';
import { ApiStatusError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import type { ClaimSource, PersistentSpec } from '../../src/main/volumes/claim-resolver.js';
import { VolumeManager } from '../../src/main/volumes/volume-manager.js';
import type { VolumeHost, VolumePlugin } from '../../src/main/volumes/volume-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

/** A PV plugin ("fake/pv", directories named after the PV) for PVs with a `local` source; records its calls. */
class FakePVPlugin implements VolumePlugin {
  readonly name = 'fake/pv';
  readonly requiresRemount = false;
  readonly dirNamedByPV = true;
  readonly calls: string[] = [];
  canSupport = () => false;
  canSupportPersistent = (pv: PersistentVolume) => pv.spec?.local !== undefined;
  async setUp(pod: Pod, v: Volume, _host: VolumeHost, p?: PersistentSpec) {
    this.calls.push(`setUp ${pod.metadata.uid}/${v.name} pv=${p?.pv.metadata?.name} ro=${p?.readOnly}`);
    return { path: `/pv/${p?.pv.metadata?.name}`, readOnly: p?.readOnly ?? false };
  }
  async tearDown(uid: string, dirName: string) {
    this.calls.push(`tearDown ${uid}/${dirName}`);
  }
}

/** Claims and PVs in memory: bind(claim, pv) binds both as the controller-manager does. */
class FakeClaims implements ClaimSource {
  readonly claims = new Map<string, PersistentVolumeClaim>();
  readonly volumes = new Map<string, PersistentVolume>();
  addClaim(name: string): void {
    this.claims.set(name, { metadata: { name, namespace: 'ns', uid: `uid-${name}` }, spec: {}, status: { phase: 'Pending' } });
  }
  bind(claim: string, pv: string, source: object = { local: { path: '/mnt/x' } }): void {
    const c = this.claims.get(claim)!;
    c.spec!.volumeName = pv;
    c.status!.phase = 'Bound';
    this.volumes.set(pv, { metadata: { name: pv }, spec: { ...source, claimRef: { name: claim, namespace: 'ns', uid: c.metadata!.uid } } });
  }
  async getClaim(_ns: string, name: string) {
    const c = this.claims.get(name);
    if (!c) throw new ApiStatusError(`GET x: 404 NotFound: persistentvolumeclaims "${name}" not found`, 404, 'NotFound');
    return structuredClone(c);
  }
  async getVolume(name: string) {
    const v = this.volumes.get(name);
    if (!v) throw new ApiStatusError(`GET x: 404 NotFound: persistentvolumes "${name}" not found`, 404, 'NotFound');
    return structuredClone(v);
  }
}

const pod = (uid: string, claimName = 'c', readOnly?: boolean): Pod => ({
  metadata: { uid, name: `p-${uid}`, namespace: 'ns' },
  spec: {
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName, readOnly } }],
    containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
  },
});

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
};

describe('VolumeManager with persistentVolumeClaim volumes', () => {
  let root: string;
  let plugin: FakePVPlugin;
  let claims: FakeClaims;
  let events: string[];
  const manager = (withClaims = true) =>
    new VolumeManager({
      host: {
        rootDir: root,
        mounter: new FakeMounter(),
        clock: new FakeClock(),
        logger: silentLogger(),
        nodeAllocatable: { cpu: '1', memory: '1Gi' },
        claims: withClaims ? claims : undefined,
      },
      plugins: [plugin],
      recorder: { record: (ref, type, reason, message) => events.push(`${ref.name} ${type} ${reason} ${message}`) },
      clock: new FakeClock(),
      logger: silentLogger(),
    });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-vm-pvc-'));
    plugin = new FakePVPlugin();
    claims = new FakeClaims();
    events = [];
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("an unbound claim fails the wait with upstream's message; once bound the PV is set up with the claim's readOnly and gid", async () => {
    const vm = manager();
    claims.addClaim('c');
    await expect(vm.waitForAttachAndMount(pod('u1', 'c', true))).rejects.toMatchObject({
      message:
        'unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC ns/c: PVC is not bound',
    });
    expect(plugin.calls).toEqual([]);
    claims.bind('c', 'pv-1');
    claims.volumes.get('pv-1')!.metadata!.annotations = { 'pv.beta.kubernetes.io/gid': '3456' };
    // The PV's gid annotation travels with the volume to the container config (an extra supplemental group).
    expect(await vm.waitForAttachAndMount(pod('u1', 'c', true))).toEqual({ data: { path: '/pv/pv-1', readOnly: true, gid: '3456' } });
    expect(plugin.calls).toEqual(['setUp u1/data pv=pv-1 ro=true']);
  });

  it('a missing claim names it', async () => {
    await expect(manager().waitForAttachAndMount(pod('u1', 'gone'))).rejects.toThrow(
      'error processing PVC ns/gone: failed to fetch PVC from API server: persistentvolumeclaims "gone" not found',
    );
  });

  it('a mounted volume whose claim can no longer be resolved stays mounted while the sync fails', async () => {
    const vm = manager();
    claims.addClaim('c');
    claims.bind('c', 'pv-1');
    await vm.waitForAttachAndMount(pod('u1'));
    claims.claims.get('c')!.metadata!.deletionTimestamp = '2026-11-27T10:00:00Z';
    await expect(vm.waitForAttachAndMount(pod('u1'))).rejects.toThrow(
      'unmounted volumes=[], unattached volumes=[], failed to process volumes=[]: error processing PVC ns/c: PVC is being deleted',
    );
    await settle();
    expect(plugin.calls).toEqual(['setUp u1/data pv=pv-1 ro=false']);
    expect(vm.hasVolumes('u1')).toBe(true);
    await vm.waitForUnmount('u1');
    expect(plugin.calls.at(-1)).toBe('tearDown u1/pv-1');
  });

  it('standalone, a claim needs the apiserver; a PV of an unsupported source is named', async () => {
    await expect(manager(false).waitForAttachAndMount(pod('u1'))).rejects.toThrow(
      'volume "data": persistentVolumeClaim volumes need the apiserver: kubelet-ts runs standalone',
    );
    claims.addClaim('c');
    claims.bind('c', 'pv-nfs', { nfs: { server: 's', path: '/' } });
    await expect(manager().waitForAttachAndMount(pod('u2'))).rejects.toThrow(
      'volume "data": PersistentVolume "pv-nfs" is a nfs volume, which kubelet-ts does not support (it supports local, hostPath and CSI PersistentVolumes)',
    );
  });

  it('after a restart a PV directory is claimed by its pod (not torn down) and that of a gone pod is torn down by PV name', async () => {
    await mkdir(join(root, 'pods/u1/volumes/fake~pv/pv-1'), { recursive: true });
    await mkdir(join(root, 'pods/u2/volumes/fake~pv/pv-2'), { recursive: true });
    const vm = manager();
    expect(await vm.reconstruct()).toBe(2);
    claims.addClaim('c');
    claims.bind('c', 'pv-1');
    expect(await vm.waitForAttachAndMount(pod('u1'))).toEqual({ data: { path: '/pv/pv-1', readOnly: false } });
    vm.releaseOrphans((uid) => uid === 'u1');
    await settle();
    await vm.idle();
    expect(plugin.calls.sort()).toEqual(['setUp u1/data pv=pv-1 ro=false', 'tearDown u2/pv-2']);
    expect(vm.hasVolumes('u1')).toBe(true);
    expect(vm.hasVolumes('u2')).toBe(false);
    await vm.waitForUnmount('u1');
    expect(plugin.calls.at(-1)).toBe('tearDown u1/pv-1');
  });

  it('a PV directory of a gone pod takes the subPath binds no other volume of the pod owns', async () => {
    await mkdir(join(root, 'pods/u3/volumes/fake~pv/pv-3'), { recursive: true });
    await mkdir(join(root, 'pods/u3/volumes/fake~disk/scratch'), { recursive: true });
    await mkdir(join(root, 'pods/u3/volume-subpaths/data/app/0'), { recursive: true });
    await mkdir(join(root, 'pods/u3/volume-subpaths/scratch/app/0'), { recursive: true });
    const disk: VolumePlugin = {
      name: 'fake/disk',
      requiresRemount: false,
      canSupport: () => false,
      setUp: () => Promise.reject(new Error('unused')),
      tearDown: async () => {},
    };
    const vm = new VolumeManager({
      host: {
        rootDir: root,
        mounter: new FakeMounter(),
        clock: new FakeClock(),
        logger: silentLogger(),
        nodeAllocatable: { cpu: '1', memory: '1Gi' },
      },
      plugins: [plugin, disk],
      recorder: { record: () => undefined },
      clock: new FakeClock(),
      logger: silentLogger(),
    });
    await vm.reconstruct();
    // The pod volume name behind pv-3 is unknown after a restart: its teardown takes "data", the binds no other volume owns.
    await vm.waitForUnmount('u3');
    expect(plugin.calls).toEqual(['tearDown u3/pv-3']);
    await expect(readdir(join(root, 'pods/u3/volume-subpaths'))).rejects.toThrow(/ENOENT/);
  });
});
