import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkRequiredControllers, MissingCgroupControllerError, readCgroupLayout } from '../../src/main/cgroups/cgroup-controllers.js';
import { cpuSharesToWeight, CgroupWriteError, FsCgroupManager } from '../../src/main/cgroups/fs-cgroup-manager.js';

const trees: string[] = [];
afterEach(() => {
  for (const t of trees.splice(0)) rmSync(t, { recursive: true, force: true });
});

/** The kernel removes a cgroup's files with its directory; a tmp tree needs them removed first. */
async function emulatedRmdir(dir: string): Promise<void> {
  for (const e of readdirSync(dir, { withFileTypes: true })) if (!e.isDirectory()) unlinkSync(join(dir, e.name));
  rmdirSync(dir);
}

function v1Tree(controllers = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'blkio', 'freezer']): string {
  const root = mkdtempSync(join(tmpdir(), 'kts-cg1-'));
  trees.push(root);
  for (const c of controllers) mkdirSync(join(root, c));
  mkdirSync(join(root, 'unified'));
  mkdirSync(join(root, 'systemd'));
  if (controllers.includes('cpuset')) {
    writeFileSync(join(root, 'cpuset', 'cpuset.cpus'), '0-3\n');
    writeFileSync(join(root, 'cpuset', 'cpuset.mems'), '0\n');
  }
  return root;
}

function v2Tree(controllers = 'cpuset cpu io memory hugetlb pids rdma'): string {
  const root = mkdtempSync(join(tmpdir(), 'kts-cg2-'));
  trees.push(root);
  writeFileSync(join(root, 'cgroup.controllers'), controllers + '\n');
  return root;
}

const read = (...p: string[]) => readFileSync(join(...p), 'utf8');
const NAME = ['kts', 'kubepods', 'burstable', 'poduid-1'];

describe('cgroup layout and required controllers', () => {
  it('v1: one hierarchy per mounted controller; the v2 mount and the named systemd hierarchy are not controllers', async () => {
    const root = v1Tree();
    const layout = await readCgroupLayout(root);
    expect(layout.version).toBe(1);
    expect([...layout.controllers.keys()].sort()).toEqual(['blkio', 'cpu', 'cpuacct', 'cpuset', 'freezer', 'memory', 'pids']);
    expect(layout.hierarchies).toHaveLength(7);
    expect(layout.extra.map((d) => d.slice(root.length + 1)).sort()).toEqual(['systemd', 'unified']);
  });

  it('v1: co-mounted controllers (cpu,cpuacct with links) are one hierarchy', async () => {
    const root = v1Tree(['cpu,cpuacct', 'cpuset', 'memory']);
    symlinkSync('cpu,cpuacct', join(root, 'cpu'));
    symlinkSync('cpu,cpuacct', join(root, 'cpuacct'));
    const layout = await readCgroupLayout(root);
    expect(layout.controllers.get('cpu')).toBe(layout.controllers.get('cpuacct'));
    expect(layout.hierarchies).toHaveLength(3);
  });

  it('v2: the controllers of the root cgroup.controllers', async () => {
    const layout = await readCgroupLayout(v2Tree());
    expect(layout.version).toBe(2);
    expect(layout.hierarchies).toHaveLength(1);
    expect(layout.controllers.has('memory')).toBe(true);
  });

  it.each<[string, () => string, boolean, string | undefined]>([
    ['v1 complete', () => v1Tree(), true, undefined],
    ['v1 without memory', () => v1Tree(['cpu', 'cpuacct', 'cpuset', 'pids']), false, 'memory'],
    ['v1 without pids, no pids limit', () => v1Tree(['cpu', 'cpuacct', 'cpuset', 'memory']), false, undefined],
    ['v1 without pids, with a pids limit', () => v1Tree(['cpu', 'cpuacct', 'cpuset', 'memory']), true, 'pids'],
    ['v1 without cpuacct and cpuset', () => v1Tree(['cpu', 'memory']), false, 'cpuacct, cpuset'],
    ['v2 complete (no cpuacct in v2)', () => v2Tree(), true, undefined],
    ['v2 without cpuset', () => v2Tree('cpu memory pids'), false, 'cpuset'],
  ])('%s', async (_, tree, pids, missing) => {
    const layout = await readCgroupLayout(tree());
    const check = () => checkRequiredControllers(layout, { pids });
    if (missing === undefined) expect(check).not.toThrow();
    else {
      expect(check).toThrow(MissingCgroupControllerError);
      expect(check).toThrow(`controller(s) ${missing}, which`);
    }
  });
});

describe('FsCgroupManager on cgroup v1', () => {
  const manager = async (root: string) => new FsCgroupManager({ layout: await readCgroupLayout(root), rmdir: emulatedRmdir });

  it('creates the cgroup in every hierarchy and writes the v1 files', async () => {
    const root = v1Tree();
    const m = await manager(root);
    expect(await m.exists(NAME)).toBe(false);
    await m.create(NAME, { cpuShares: 512, cpuPeriod: 100_000, cpuQuota: 50_000, memoryLimitBytes: 128 * 1024 ** 2, pidsLimit: 100 });
    expect(await m.exists(NAME)).toBe(true);
    for (const c of ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'blkio', 'freezer'])
      expect(existsSync(join(root, c, ...NAME))).toBe(true);
    expect(existsSync(join(root, 'unified', ...NAME))).toBe(false);
    expect(read(root, 'cpu', ...NAME, 'cpu.shares')).toBe('512');
    expect(read(root, 'cpu', ...NAME, 'cpu.cfs_period_us')).toBe('100000');
    expect(read(root, 'cpu', ...NAME, 'cpu.cfs_quota_us')).toBe('50000');
    expect(read(root, 'memory', ...NAME, 'memory.limit_in_bytes')).toBe(String(128 * 1024 ** 2));
    expect(read(root, 'pids', ...NAME, 'pids.max')).toBe('100');
    // Each new cpuset level inherits its parent's cpus and mems.
    expect(read(root, 'cpuset', 'kts', 'cpuset.cpus')).toBe('0-3');
    expect(read(root, 'cpuset', ...NAME, 'cpuset.mems')).toBe('0');
    expect(m.name(NAME)).toBe('/kts/kubepods/burstable/poduid-1');
  });

  it('unlimited values: quota -1, memory -1, pids max; absent fields are not written', async () => {
    const root = v1Tree();
    const m = await manager(root);
    await m.create(NAME, { cpuShares: 2 });
    expect(existsSync(join(root, 'cpu', ...NAME, 'cpu.cfs_quota_us'))).toBe(false);
    await m.update(NAME, { cpuQuota: -1, memoryLimitBytes: 0, pidsLimit: -1 });
    expect(read(root, 'cpu', ...NAME, 'cpu.cfs_quota_us')).toBe('-1');
    expect(read(root, 'memory', ...NAME, 'memory.limit_in_bytes')).toBe('-1');
    expect(read(root, 'pids', ...NAME, 'pids.max')).toBe('max');
    expect(read(root, 'cpu', ...NAME, 'cpu.shares')).toBe('2');
  });

  it('a pids limit without the pids controller is an error naming it', async () => {
    const m = await manager(v1Tree(['cpu', 'cpuacct', 'cpuset', 'memory']));
    await expect(m.create(NAME, { pidsLimit: 10 })).rejects.toThrow(/the pids cgroup controller is not available/);
  });

  it('destroy removes the cgroup and its children in every hierarchy; the parent stays', async () => {
    const root = v1Tree();
    const m = await manager(root);
    await m.create(NAME, { cpuShares: 2 });
    mkdirSync(join(root, 'cpu', ...NAME, 'container-1'));
    writeFileSync(join(root, 'cpu', ...NAME, 'container-1', 'cpu.shares'), '2');
    // runc makes the container cgroups in the named systemd hierarchy and the hybrid v2 mount too.
    for (const extra of ['systemd', 'unified']) mkdirSync(join(root, extra, ...NAME, 'container-1'), { recursive: true });
    writeFileSync(join(root, 'unified', ...NAME, 'container-1', 'cgroup.procs'), '77\n');
    expect(await m.pids(NAME)).toEqual([77]);
    expect(await m.children(NAME.slice(0, -1))).toEqual([NAME.at(-1)]);
    await m.destroy(NAME);
    expect(await m.exists(NAME)).toBe(false);
    for (const c of ['cpu', 'memory', 'blkio', 'systemd', 'unified']) expect(existsSync(join(root, c, ...NAME))).toBe(false);
    expect(existsSync(join(root, 'cpu', 'kts', 'kubepods', 'burstable'))).toBe(true);
    await m.destroy(NAME); // already gone: no error
    await expect(m.destroy([])).rejects.toThrow(CgroupWriteError);
  });

  it('destroy retries a busy cgroup, then gives up with an error naming it', async () => {
    const root = v1Tree(['cpu', 'cpuacct', 'cpuset', 'memory']);
    let busy = 2;
    const m = new FsCgroupManager({
      layout: await readCgroupLayout(root),
      rmdir: async (dir) => {
        if (busy-- > 0) throw Object.assign(new Error('EBUSY: resource busy'), { code: 'EBUSY' });
        await emulatedRmdir(dir);
      },
    });
    await m.create(['a'], {});
    await m.destroy(['a']);
    expect(existsSync(join(root, 'cpu', 'a'))).toBe(false);
    const stuck = new FsCgroupManager({
      layout: await readCgroupLayout(root),
      rmdir: () => Promise.reject(Object.assign(new Error('EBUSY: resource busy'), { code: 'EBUSY' })),
    });
    await stuck.create(['b'], {});
    await expect(stuck.destroy(['b'])).rejects.toThrow(/cannot remove cgroup .*\/b: EBUSY/);
  });

  it('pids of the cgroup and its descendants, once each across hierarchies', async () => {
    const root = v1Tree(['cpu', 'cpuacct', 'cpuset', 'memory']);
    const m = await manager(root);
    await m.create(NAME, {});
    mkdirSync(join(root, 'memory', ...NAME, 'c1'));
    writeFileSync(join(root, 'memory', ...NAME, 'cgroup.procs'), '10\n11\n');
    writeFileSync(join(root, 'memory', ...NAME, 'c1', 'cgroup.procs'), '12\n');
    writeFileSync(join(root, 'cpu', ...NAME, 'cgroup.procs'), '10\n');
    expect((await m.pids(NAME)).sort()).toEqual([10, 11, 12]);
    expect(await m.pids(['nope'])).toEqual([]);
  });

  it('children lists child cgroups of any hierarchy', async () => {
    const root = v1Tree(['cpu', 'cpuacct', 'cpuset', 'memory']);
    const m = await manager(root);
    await m.create(['k', 'poda'], {});
    mkdirSync(join(root, 'memory', 'k', 'podb'));
    expect((await m.children(['k'])).sort()).toEqual(['poda', 'podb']);
    expect(await m.children(['missing'])).toEqual([]);
  });
});

describe('FsCgroupManager on cgroup v2', () => {
  it('enables the controllers in every ancestor and writes the v2 files', async () => {
    const root = v2Tree();
    const m = new FsCgroupManager({ layout: await readCgroupLayout(root), rmdir: emulatedRmdir });
    await m.create(NAME, { cpuShares: 1024, cpuPeriod: 100_000, cpuQuota: 25_000, memoryLimitBytes: 64 * 1024 ** 2, pidsLimit: 50 });
    expect(m.version).toBe(2);
    for (const level of [[], ['kts'], ['kts', 'kubepods'], ['kts', 'kubepods', 'burstable']]) {
      expect(read(root, ...level, 'cgroup.subtree_control')).toBe('+cpu +cpuset +memory +hugetlb +pids +io');
    }
    expect(read(root, ...NAME, 'cpu.weight')).toBe('39');
    expect(read(root, ...NAME, 'cpu.max')).toBe('25000 100000');
    expect(read(root, ...NAME, 'memory.max')).toBe(String(64 * 1024 ** 2));
    expect(read(root, ...NAME, 'pids.max')).toBe('50');
    expect(await m.exists(NAME)).toBe(true);
    await m.update(NAME, { cpuQuota: -1, cpuPeriod: 100_000, memoryLimitBytes: 0, pidsLimit: -1 });
    expect(read(root, ...NAME, 'cpu.max')).toBe('max 100000');
    expect(read(root, ...NAME, 'memory.max')).toBe('max');
    expect(read(root, ...NAME, 'pids.max')).toBe('max');
    await m.destroy(['kts']);
    expect(existsSync(join(root, 'kts'))).toBe(false);
  });

  it.each<[number, number]>([
    [0, 0],
    [2, 1],
    [1024, 39],
    [262_144, 10_000],
  ])('cpu shares %i are cpu.weight %i', (shares, weight) => {
    expect(cpuSharesToWeight(shares)).toBe(weight);
  });
});

describe('FsCgroupManager with the systemd driver (slices written through the cgroup filesystem)', () => {
  /** upstream's systemd layout of ['kts', 'kubepods', 'burstable', 'poduid-1'] (dashes in a component become '_'). */
  const SLICES = ['kts.slice', 'kts-kubepods.slice', 'kts-kubepods-burstable.slice', 'kts-kubepods-burstable-poduid_1.slice'];

  it('v1: nested slices in every hierarchy, the slice path as the runtime name, the same files', async () => {
    const root = v1Tree();
    const m = new FsCgroupManager({ layout: await readCgroupLayout(root), driver: 'systemd', rmdir: emulatedRmdir });
    expect(m.name(NAME)).toBe(`/${SLICES.join('/')}`);
    await m.create(NAME, { cpuShares: 102, cpuPeriod: 100_000, cpuQuota: 30_000, memoryLimitBytes: 128 * 1024 ** 2, pidsLimit: 200 });
    expect(await m.exists(NAME)).toBe(true);
    for (const c of ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids']) expect(existsSync(join(root, c, ...SLICES))).toBe(true);
    expect(existsSync(join(root, 'cpu', ...NAME))).toBe(false);
    expect(read(root, 'cpu', ...SLICES, 'cpu.shares')).toBe('102');
    expect(read(root, 'cpu', ...SLICES, 'cpu.cfs_quota_us')).toBe('30000');
    expect(read(root, 'memory', ...SLICES, 'memory.limit_in_bytes')).toBe(String(128 * 1024 ** 2));
    expect(read(root, 'pids', ...SLICES, 'pids.max')).toBe('200');
    expect(read(root, 'cpuset', ...SLICES, 'cpuset.cpus')).toBe('0-3');
  });

  it('children are name components: a pod slice reads as pod<uid> with its dashes back; scopes are not children', async () => {
    const root = v1Tree(['cpu', 'cpuacct', 'cpuset', 'memory']);
    const m = new FsCgroupManager({ layout: await readCgroupLayout(root), driver: 'systemd', rmdir: emulatedRmdir });
    await m.create(['kubepods', 'pod1-2-3'], {});
    await m.create(['kubepods', 'burstable'], {});
    // What containerd's systemd driver makes inside a pod slice.
    mkdirSync(join(root, 'memory', 'kubepods.slice', 'kubepods-pod1_2_3.slice', 'cri-containerd-abc.scope'));
    expect((await m.children(['kubepods'])).sort()).toEqual(['burstable', 'pod1-2-3']);
    expect(await m.children(['kubepods', 'pod1-2-3'])).toEqual([]);
    writeFileSync(join(root, 'memory', 'kubepods.slice', 'kubepods-pod1_2_3.slice', 'cri-containerd-abc.scope', 'cgroup.procs'), '7\n');
    expect(await m.pids(['kubepods', 'pod1-2-3'])).toEqual([7]);
    unlinkSync(join(root, 'memory', 'kubepods.slice', 'kubepods-pod1_2_3.slice', 'cri-containerd-abc.scope', 'cgroup.procs'));
    await m.destroy(['kubepods', 'pod1-2-3']);
    expect(existsSync(join(root, 'memory', 'kubepods.slice', 'kubepods-pod1_2_3.slice'))).toBe(false);
    expect(existsSync(join(root, 'memory', 'kubepods.slice', 'kubepods-burstable.slice'))).toBe(true);
  });

  it('v2: the slices enable the controllers level by level', async () => {
    const root = v2Tree();
    const m = new FsCgroupManager({ layout: await readCgroupLayout(root), driver: 'systemd', rmdir: emulatedRmdir });
    await m.create(NAME, { cpuShares: 1024, memoryLimitBytes: 64 * 1024 ** 2 });
    for (let i = 0; i < SLICES.length; i++) {
      expect(read(root, ...SLICES.slice(0, i), 'cgroup.subtree_control')).toBe('+cpu +cpuset +memory +hugetlb +pids +io');
    }
    expect(read(root, ...SLICES, 'cpu.weight')).toBe('39');
    expect(read(root, ...SLICES, 'memory.max')).toBe(String(64 * 1024 ** 2));
  });
});
