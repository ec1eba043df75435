import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { PodCgroupManager } from '../../src/main/cgroups/pod-cgroups.js';
import { kubepodsLimits, QosCgroups } from '../../src/main/cgroups/qos-cgroups.js';
import { FakeCgroupManager } from '../fakes/fake-cgroup-manager.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { FakeClock } from '../fakes/fake-clock.js';

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
function pod(uid: string, resources: Res): Pod {
  return PodSchema.parse({
    metadata: { name: uid, namespace: 'default', uid },
    spec: { containers: [{ name: 'c', image: 'busybox', resources }] },
  });
}
const guaranteed = pod('g1', { requests: { cpu: '500m', memory: '64Mi' }, limits: { cpu: '500m', memory: '64Mi' } });
const burstable = pod('b1', { requests: { cpu: '250m' } });
const besteffort = pod('e1', {});

function setup(o: { pidsLimit?: number; active?: Pod[]; killFails?: Set<number> } = {}) {
  const manager = new FakeCgroupManager();
  const active = o.active ?? [];
  const qos = new QosCgroups({ manager, root: ['kts'], kubepods: { cpu: '4', memory: '8Gi' }, activePods: () => active });
  const killed: number[] = [];
  const { logger, records } = captureLogger();
  const clock = new FakeClock();
  const pcm = new PodCgroupManager({
    manager,
    qos,
    resources: { enforceCPULimits: true, cpuPeriodUs: 100_000 },
    podPidsLimit: o.pidsLimit ?? -1,
    kill: (pid) => {
      if (o.killFails?.has(pid)) throw new Error('EPERM');
      killed.push(pid);
      // The process leaves its cgroup once killed.
      for (const [k, pids] of manager.procs)
        manager.procs.set(
          k,
          pids.filter((p) => p !== pid),
        );
    },
    clock,
    logger,
  });
  return { manager, qos, pcm, killed, active, records, clock };
}

describe('QosCgroups (upstream qosContainerManager)', () => {
  it('start creates kubepods with the node capacity and the two tiers', async () => {
    const { manager, qos } = setup({ active: [burstable, guaranteed] });
    await qos.start();
    expect(manager.cgroups.get('/kts/kubepods')).toEqual({ cpuShares: 4096, memoryLimitBytes: 8 * 1024 ** 3 });
    expect(manager.cgroups.get('/kts/kubepods/besteffort')).toEqual({ cpuShares: 2 });
    expect(manager.cgroups.get('/kts/kubepods/burstable')).toEqual({ cpuShares: 256 });
  });

  it('update follows the active Burstable pods', async () => {
    const { manager, qos, active } = setup();
    await qos.start();
    expect(manager.cgroups.get('/kts/kubepods/burstable')?.cpuShares).toBe(2);
    active.push(burstable, pod('b2', { requests: { cpu: '750m' } }));
    await qos.update();
    expect(manager.cgroups.get('/kts/kubepods/burstable')?.cpuShares).toBe(1024);
    active.splice(0);
    await qos.update();
    expect(qos.burstableShares()).toBe(2);
  });
});

describe('kubepodsLimits (upstream enforceNodeAllocatableCgroups)', () => {
  const capacity = { cpu: '4', memory: '8Gi' };
  it.each<[string, boolean, Record<string, string>, Record<string, string>, { cpu: string; memory: string }]>([
    ['not enforced: capacity', false, { cpu: '1', memory: '1Gi' }, {}, capacity],
    ['enforced, nothing reserved', true, {}, {}, { cpu: '4000m', memory: String(8 * 1024 ** 3) }],
    [
      'enforced: minus system and kube reserved',
      true,
      { cpu: '500m', memory: '1Gi' },
      { cpu: '250m', memory: '512Mi' },
      { cpu: '3250m', memory: String(6.5 * 1024 ** 3) },
    ],
    ['enforced: never below 0', true, { cpu: '8', memory: '16Gi' }, {}, { cpu: '0m', memory: '0' }],
  ])('%s', (_, enforcePods, systemReserved, kubeReserved, expected) => {
    expect(kubepodsLimits(capacity, { enforcePods, systemReserved, kubeReserved })).toEqual(expected);
  });

  it.each<[boolean, Record<string, string>, string]>([
    [false, { pid: '1000' }, '32768'],
    [true, {}, '32268'],
    [true, { pid: '1000' }, '31268'],
  ])('the pid capacity (pid_max): enforced %s with systemReserved %j → %s', (enforcePods, systemReserved, pid) => {
    const limits = kubepodsLimits({ ...capacity, pid: '32768' }, { enforcePods, systemReserved, kubeReserved: { pid: '500' } });
    expect(limits.pid).toBe(pid);
  });
});

describe('PodCgroupManager (upstream podContainerManager)', () => {
  it.each<[Pod, string]>([
    [guaranteed, '/kts/kubepods/podg1'],
    [burstable, '/kts/kubepods/burstable/podb1'],
    [besteffort, '/kts/kubepods/besteffort/pode1'],
  ])('a pod goes under its QoS tier: %#', async (p, parent) => {
    const { pcm, qos, manager } = setup();
    await qos.start();
    expect(pcm.cgroupParent(p)).toBe(parent);
    await pcm.ensureExists(p);
    expect(manager.cgroups.has(parent)).toBe(true);
  });

  it('ensureExists writes the pod resources and the pids limit once, updating the tiers first', async () => {
    const { pcm, qos, manager, active } = setup({ pidsLimit: 100 });
    await qos.start();
    active.push(burstable);
    manager.calls.splice(0);
    await pcm.ensureExists(burstable);
    expect(manager.calls).toEqual([
      'update /kts/kubepods/besteffort',
      'update /kts/kubepods/burstable',
      'create /kts/kubepods/burstable/podb1',
    ]);
    expect(manager.cgroups.get('/kts/kubepods/burstable')?.cpuShares).toBe(256);
    expect(manager.cgroups.get('/kts/kubepods/burstable/podb1')).toEqual({ cpuShares: 256, pidsLimit: 100 });
    manager.calls.splice(0);
    await pcm.ensureExists(burstable);
    expect(manager.calls).toEqual([]);
  });

  it('without a pids limit, pids.max is not written', () => {
    expect(setup().pcm.resourcesOf(guaranteed)).toEqual({
      cpuShares: 512,
      cpuQuota: 50_000,
      cpuPeriod: 100_000,
      memoryLimitBytes: 64 * 1024 ** 2,
    });
  });

  it('cleanup removes the pod cgroups that are not kept, killing what is left in them', async () => {
    const { pcm, qos, manager, killed, records } = setup();
    await qos.start();
    for (const p of [guaranteed, burstable, besteffort]) await pcm.ensureExists(p);
    manager.cgroups.set('/kts/kubepods/besteffort/pode1/ctr', {});
    manager.procs.set('/kts/kubepods/besteffort/pode1/ctr', [4242]);
    // Not a pod cgroup: left alone.
    manager.cgroups.set('/kts/kubepods/something', {});
    expect([...(await pcm.podCgroups()).keys()].sort()).toEqual(['b1', 'e1', 'g1']);
    pcm.cleanup((uid) => uid === 'b1');
    await pcm.idle();
    expect(killed).toEqual([4242]);
    expect([...(await pcm.podCgroups()).keys()]).toEqual(['b1']);
    expect(manager.cgroups.has('/kts/kubepods/something')).toBe(true);
    expect(manager.cgroups.has('/kts/kubepods/burstable')).toBe(true);
    expect(records.filter((r) => r.msg === 'Removed the cgroup of a pod that no longer runs').map((r) => r.podUID)).toEqual(
      expect.arrayContaining(['g1', 'e1']),
    );
  });

  it('a process that cannot be killed keeps the cgroup; the next pass tries again', async () => {
    const fails = new Set([7]);
    const { pcm, qos, manager, records } = setup({ killFails: fails });
    await qos.start();
    await pcm.ensureExists(besteffort);
    manager.procs.set('/kts/kubepods/besteffort/pode1', [7]);
    pcm.cleanup(() => false);
    await pcm.idle();
    expect(manager.cgroups.has('/kts/kubepods/besteffort/pode1')).toBe(true);
    expect(records.some((r) => r.msg === 'Failed to remove a pod cgroup; will retry' && String(r.err).includes('7: EPERM'))).toBe(true);
    fails.clear();
    pcm.cleanup(() => false);
    await pcm.idle();
    expect(manager.cgroups.has('/kts/kubepods/besteffort/pode1')).toBe(false);
  });

  it('one cleanup pass at a time: a call while one runs is skipped', async () => {
    const { pcm, qos, manager } = setup();
    await qos.start();
    await pcm.ensureExists(besteffort);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const destroy = manager.destroy.bind(manager);
    manager.destroy = async (name) => {
      await gate;
      return destroy(name);
    };
    let asked = 0;
    pcm.cleanup(() => (asked++, false));
    pcm.cleanup(() => (asked++, false));
    release();
    await pcm.idle();
    expect(asked).toBe(1);
    expect(manager.calls.filter((c) => c.startsWith('destroy'))).toEqual(['destroy /kts/kubepods/besteffort/pode1']);
  });

  it('housekeeping updates the tiers after a removal and once a minute, not on every pass', async () => {
    const { pcm, qos, manager, active, clock } = setup();
    await qos.start();
    await pcm.ensureExists(besteffort);
    const tierUpdates = () => manager.calls.filter((c) => c === 'update /kts/kubepods/burstable').length;
    const pass = async (keep: boolean) => {
      pcm.cleanup(() => keep);
      await pcm.idle();
    };
    const before = tierUpdates();
    await pass(true);
    expect(tierUpdates()).toBe(before);
    active.push(burstable);
    clock.step(60_000);
    await pass(true);
    expect(tierUpdates()).toBe(before + 1);
    expect(manager.cgroups.get('/kts/kubepods/burstable')?.cpuShares).toBe(256);
    await pass(false); // removes pode1
    expect(tierUpdates()).toBe(before + 2);
  });
});
