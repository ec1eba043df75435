import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MissingCgroupControllerError } from '../../src/main/cgroups/cgroup-controllers.js';
import type { PodCgroupManager } from '../../src/main/cgroups/pod-cgroups.js';
import { CgroupConfigError, cpuCFSQuotaOf, setupPodCgroups, type CgroupSettings } from '../../src/main/cgroups/setup-pod-cgroups.js';
import { captureLogger } from '../helpers/capture-logger.js';

const trees: string[] = [];
afterEach(() => {
  for (const t of trees.splice(0)) rmSync(t, { recursive: true, force: true });
});

function v1Tree(controllers = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids']): string {
  const root = mkdtempSync(join(tmpdir(), 'kts-cgsetup-'));
  trees.push(root);
  for (const c of controllers) mkdirSync(join(root, c));
  // cgroupRoot exists (upstream requires it).
  for (const c of controllers) mkdirSync(join(root, c, 'kts-test'));
  writeFileSync(join(root, 'cpuset', 'cpuset.cpus'), '0-1');
  writeFileSync(join(root, 'cpuset', 'cpuset.mems'), '0');
  return root;
}

const BASE: CgroupSettings = {
  cgroupsPerQOS: true,
  cgroupRoot: '/kts-test',
  cgroupDriver: 'cgroupfs',
  podPidsLimit: -1,
  otherSettings: {},
  enforceNodeAllocatable: ['pods'],
  systemReserved: { memory: '256Mi' },
  kubeReserved: { cpu: '500m' },
};
const opts = (fsRoot: string, simulated = false) => {
  const { logger, records } = captureLogger();
  return { o: { simulated, capacity: { cpu: '2', memory: '1Gi' }, activePods: () => [], logger, fsRoot }, records };
};

describe('setupPodCgroups', () => {
  it('cgroupsPerQOS false: nothing is made, and one line says so', async () => {
    const root = v1Tree();
    const { o, records } = opts(root);
    expect(await setupPodCgroups({ ...BASE, cgroupsPerQOS: false }, o)).toBeUndefined();
    expect(records.map((r) => r.msg)).toEqual([expect.stringMatching(/^cgroupsPerQOS is false \(upstream's default is true\): no QoS/)]);
    expect(existsSync(join(root, 'cpu', 'kts-test', 'kubepods'))).toBe(false);
  });

  it.each<[Partial<CgroupSettings>, string]>([
    [{ cgroupRoot: '' }, 'places each pod'],
    [{ cgroupDriver: 'systemd', cgroupRoot: '' }, 'places each pod (cgroupDriver systemd has no effect either)'],
    [{ cgroupDriver: 'systemd' }, 'places each pod (cgroupRoot /kts-test and cgroupDriver systemd have no effect either)'],
  ])('cgroupsPerQOS false with %j: the line names what has no effect', async (change, end) => {
    const { o, records } = opts(v1Tree());
    await setupPodCgroups({ ...BASE, cgroupsPerQOS: false, ...change }, o);
    expect(String(records[0]?.msg).endsWith(end)).toBe(true);
  });

  it.each<[string, Partial<CgroupSettings>, RegExp]>([
    ['podPidsLimit without cgroupsPerQOS', { cgroupsPerQOS: false, podPidsLimit: 100 }, /podPidsLimit .* need cgroupsPerQOS: true/],
  ])('refuses %s', async (_, change, message) => {
    const { o } = opts(v1Tree());
    await expect(setupPodCgroups({ ...BASE, ...change }, o)).rejects.toThrow(CgroupConfigError);
    await expect(setupPodCgroups({ ...BASE, ...change }, o)).rejects.toThrow(message);
  });

  it.each<[Partial<CgroupSettings>, string]>([
    [{}, 'no QoS or pod cgroups are made (cgroupRoot /kts-test has no effect either)'],
    // A driver refused on a real runtime is not even looked at (kubeadm's default config says systemd).
    [{ cgroupDriver: 'systemd', cgroupRoot: '' }, 'no QoS or pod cgroups are made (cgroupDriver systemd has no effect either)'],
  ])('the simulated runtime with %j: no cgroups, one line', async (change, end) => {
    const root = v1Tree();
    const { o, records } = opts(root, true);
    expect(await setupPodCgroups({ ...BASE, ...change }, o)).toBeUndefined();
    expect(records.map((r) => r.msg)).toEqual([expect.stringMatching(/^cgroupsPerQOS has no effect with the simulated runtime/)]);
    expect(String(records[0]?.msg).endsWith(end)).toBe(true);
    expect(existsSync(join(root, 'cpu', 'kts-test', 'kubepods'))).toBe(false);
  });

  it('the simulated runtime touches no cgroup filesystem, even one that does not exist', async () => {
    const { o } = opts('/nonexistent-cgroup-fs', true);
    await expect(setupPodCgroups({ ...BASE, cgroupRoot: '' }, o)).resolves.toBeUndefined();
  });

  it('a cgroupRoot that does not exist is refused, naming it', async () => {
    const { o } = opts(v1Tree());
    await expect(setupPodCgroups({ ...BASE, cgroupRoot: '/nope' }, o)).rejects.toThrow(/^cgroupRoot \/nope does not exist/);
    // '' is the root cgroup (upstream defaults it to /).
    const root = v1Tree();
    await expect(setupPodCgroups({ ...BASE, cgroupRoot: '' }, opts(root).o)).resolves.toBeDefined();
    expect(readFileSync(join(root, 'cpu', 'kubepods', 'besteffort', 'cpu.shares'), 'utf8')).toBe('2');
  });

  it('a runtime on the other cgroup driver is refused; one that says nothing is not', async () => {
    const systemd = {
      config: JSON.stringify({ containerd: { defaultRuntimeName: 'runc', runtimes: { runc: { options: { SystemdCgroup: true } } } } }),
    };
    const { o } = opts(v1Tree());
    await expect(setupPodCgroups(BASE, { ...o, runtimeInfo: () => Promise.resolve(systemd) })).rejects.toThrow(
      'cgroupDriver is cgroupfs but the runtime uses the systemd cgroup driver (containerd: SystemdCgroup = true); they must match',
    );
    await expect(setupPodCgroups(BASE, { ...o, runtimeInfo: () => Promise.resolve(undefined) })).resolves.toBeDefined();
  });

  it('a missing controller is named', async () => {
    const { o } = opts(v1Tree(['cpu', 'cpuacct', 'cpuset']));
    await expect(setupPodCgroups(BASE, o)).rejects.toThrow(MissingCgroupControllerError);
    await expect(setupPodCgroups(BASE, o)).rejects.toThrow(/memory/);
  });

  it('creates the QoS tiers under cgroupRoot and returns pod cgroups there', async () => {
    const root = v1Tree();
    const { o } = opts(root);
    const pcm = await setupPodCgroups({ ...BASE, podPidsLimit: 64 }, { ...o, pidMax: () => Promise.resolve(4096) });
    // enforceNodeAllocatable "pods": capacity minus the reservations.
    expect(readFileSync(join(root, 'cpu', 'kts-test', 'kubepods', 'cpu.shares'), 'utf8')).toBe('1536');
    expect(readFileSync(join(root, 'cpu', 'kts-test', 'kubepods', 'besteffort', 'cpu.shares'), 'utf8')).toBe('2');
    expect(readFileSync(join(root, 'memory', 'kts-test', 'kubepods', 'memory.limit_in_bytes'), 'utf8')).toBe(String(768 * 1024 ** 2));
    expect(readFileSync(join(root, 'pids', 'kts-test', 'kubepods', 'pids.max'), 'utf8')).toBe('4096');
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { uid: 'u9' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    expect(pcm?.cgroupParent(pod)).toBe('/kts-test/kubepods/besteffort/podu9');
    await pcm?.ensureExists(pod);
    expect(readFileSync(join(root, 'pids', 'kts-test', 'kubepods', 'besteffort', 'podu9', 'pids.max'), 'utf8')).toBe('64');
  });

  it('the systemd driver: slices under the cgroupRoot slice, a slice path as cgroup_parent, housekeeping finds its pods', async () => {
    const root = v1Tree();
    for (const c of ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids']) mkdirSync(join(root, c, 'kts_test.slice'));
    const { o, records } = opts(root);
    const pcm = await setupPodCgroups({ ...BASE, cgroupDriver: 'systemd' }, o);
    const kubepods = join(root, 'cpu', 'kts_test.slice', 'kts_test-kubepods.slice');
    expect(readFileSync(join(kubepods, 'cpu.shares'), 'utf8')).toBe('1536');
    expect(readFileSync(join(kubepods, 'kts_test-kubepods-besteffort.slice', 'cpu.shares'), 'utf8')).toBe('2');
    expect(records.at(-1)).toMatchObject({ cgroupDriver: 'systemd', kubepods: '/kts_test.slice/kts_test-kubepods.slice' });
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { uid: 'u-9' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    expect(pcm?.cgroupParent(pod)).toBe(
      '/kts_test.slice/kts_test-kubepods.slice/kts_test-kubepods-besteffort.slice/kts_test-kubepods-besteffort-podu_9.slice',
    );
    await pcm?.ensureExists(pod);
    const podDir = join(kubepods, 'kts_test-kubepods-besteffort.slice', 'kts_test-kubepods-besteffort-podu_9.slice');
    expect(readFileSync(join(podDir, 'cpu.shares'), 'utf8')).toBe('2');
    // Housekeeping's view: the pod's uid, dashes back, from the slice name.
    expect([...(await (pcm as PodCgroupManager).podCgroups()).entries()]).toEqual([
      ['u-9', ['kts-test', 'kubepods', 'besteffort', 'podu-9']],
    ]);
  });

  it('the systemd driver with a cgroupRoot whose slice does not exist is refused, naming both forms', async () => {
    const { o } = opts(v1Tree());
    await expect(setupPodCgroups({ ...BASE, cgroupDriver: 'systemd' }, o)).rejects.toThrow(
      /^cgroupRoot \/kts-test \(\/kts_test\.slice\) does not exist/,
    );
  });

  it.each<[Record<string, unknown>, boolean]>([
    [{}, true],
    [{ cpuCFSQuota: true }, true],
    [{ cpuCFSQuota: false }, false],
  ])('cpuCFSQuota %j is %s', (otherSettings, value) => {
    expect(cpuCFSQuotaOf({ otherSettings })).toBe(value);
  });
});
