import { describe, expect, it } from 'vitest';
import { CriError } from '../../src/common/errors.js';
import { criStats, SandboxesWithoutStats } from '../../src/workers/stats/cri-stats.js';
import { FakeCri } from '../fakes/fake-cri.js';

const UNKNOWN = 2;
const UNIMPLEMENTED = 12;
const ts = 1_000_000_000n;
const v = (value: bigint) => ({ value });

/** Two ready sandboxes with one running container each; a1 uses 10 MiB, b1 20 MiB. */
function runtime(listStats: () => Promise<unknown>): FakeCri {
  const cri = new FakeCri();
  const sandbox = (id: string, name: string) => ({ id, createdAt: 1n, metadata: { uid: `uid-${id}`, name, namespace: 'ns' } });
  const container = (id: string, sandboxId: string) => ({ id, podSandboxId: sandboxId, createdAt: 2n, metadata: { name: 'c' } });
  const stats = (id: string, bytes: bigint) => ({
    attributes: { id },
    cpu: { timestamp: ts, usageCoreNanoSeconds: v(bytes) },
    memory: { timestamp: ts, workingSetBytes: v(bytes), usageBytes: v(bytes) },
  });
  Object.assign(cri.handlers, {
    listPodSandbox: async () => ({ items: [sandbox('a', 'pa'), sandbox('b', 'pb')] }),
    listContainers: async () => ({ containers: [container('a1', 'a'), container('b1', 'b')] }),
    listContainerStats: async () => ({ stats: [stats('a1', 10n << 20n), stats('b1', 20n << 20n)] }),
    listPodSandboxStats: listStats,
    imageFsInfo: async () => ({ imageFilesystems: [] }),
  });
  return cri;
}

const cgroupPathEmpty = (id: string) =>
  new CriError(
    `rpc error: code = Unknown desc = failed to get cgroup metrics for sandbox ${id} because cgroupPath is empty`,
    'ListPodSandboxStats',
    UNKNOWN,
  );

describe('criStats: every ready sandbox is reported', () => {
  it('containerd 1.6 failing ListPodSandboxStats ("cgroupPath is empty"): each sandbox is asked alone, the ones without stats get their containers’ sums', async () => {
    const cri = runtime(() => Promise.reject(cgroupPathEmpty('a')));
    cri.handlers.podSandboxStats = async (r) => {
      if (r.podSandboxId === 'a') throw cgroupPathEmpty('a');
      return {
        stats: {
          attributes: { id: 'b' },
          linux: { memory: { timestamp: ts, workingSetBytes: v(99n), usageBytes: v(99n) }, network: undefined },
        },
      };
    };
    const snap = await criStats(cri.api);
    expect(snap.pods.map((p) => p.name)).toEqual(['pa', 'pb']);
    const [a, b] = snap.pods;
    expect(a.memory?.workingSetBytes).toBe(10n << 20n); // summed from its container
    expect(a.cpu?.usageCoreNanoSeconds).toBe(10n << 20n);
    expect(a.containers.map((c) => c.id)).toEqual(['a1']);
    expect(b.memory?.workingSetBytes).toBe(99n); // the sandbox's own stats
    expect(cri.callsOf('podSandboxStats')).toEqual([{ podSandboxId: 'a' }, { podSandboxId: 'b' }]);
  });

  it('never has two sandbox stats calls in flight, even for three snapshots at once (containerd 1.6 races on them)', async () => {
    let inFlight = 0;
    let most = 0;
    const held = async <T>(value: T): Promise<T> => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      return value;
    };
    const cri = runtime(() => held(undefined).then(() => Promise.reject(cgroupPathEmpty('a'))));
    cri.handlers.podSandboxStats = (r) => held({ stats: { attributes: { id: r.podSandboxId } } });
    const snaps = await Promise.all([criStats(cri.api), criStats(cri.api), criStats(cri.api)]);
    expect(snaps.map((x) => x.pods.length)).toEqual([2, 2, 2]);
    expect(cri.callsOf('podSandboxStats')).toHaveLength(6);
    expect(most).toBe(1);
  });

  it('a runtime without ListPodSandboxStats (UNIMPLEMENTED) gets container sums, with no per-sandbox calls', async () => {
    const cri = runtime(() => Promise.reject(new CriError('unimplemented', 'ListPodSandboxStats', UNIMPLEMENTED)));
    const snap = await criStats(cri.api);
    expect(snap.pods.map((p) => p.memory?.workingSetBytes)).toEqual([10n << 20n, 20n << 20n]);
    expect(cri.callsOf('podSandboxStats')).toEqual([]);
  });

  it('a failure that is not a CRI error still fails the task', async () => {
    const cri = runtime(() => Promise.reject(new TypeError('bug')));
    await expect(criStats(cri.api)).rejects.toThrow('bug');
  });
});

describe('criStats: sandboxes without stats are remembered', () => {
  /** Sandbox a has no cgroup path; b fails once for another reason, then has stats. */
  function mixed(): { cri: FakeCri; setSandboxes: (ids: string[]) => void } {
    const cri = runtime(() => Promise.reject(cgroupPathEmpty('a')));
    let ids = ['a', 'b'];
    cri.handlers.listPodSandbox = async () => ({
      items: ids.map((id) => ({ id, createdAt: 1n, metadata: { uid: `uid-${id}`, name: `p${id}`, namespace: 'ns' } })),
    });
    let bCalls = 0;
    cri.handlers.podSandboxStats = async (r) => {
      if (r.podSandboxId === 'a') throw cgroupPathEmpty('a');
      if (r.podSandboxId === 'b' && bCalls++ === 0) throw new CriError('deadline exceeded', 'PodSandboxStats', 4);
      return { stats: { attributes: { id: r.podSandboxId }, linux: { memory: { timestamp: ts, workingSetBytes: v(7n) } } } };
    };
    return { cri, setSandboxes: (next) => (ids = next) };
  }

  it('a sandbox without a cgroup path is asked once, and the list no more while it is ready; other failures are asked again', async () => {
    const { cri } = mixed();
    const withoutStats = new SandboxesWithoutStats();
    const first = await criStats(cri.api, { withoutStats });
    expect(first.pods.map((p) => p.memory?.workingSetBytes)).toEqual([10n << 20n, 20n << 20n]); // both from containers
    const second = await criStats(cri.api, { withoutStats });
    expect(second.pods.map((p) => p.memory?.workingSetBytes)).toEqual([10n << 20n, 7n]); // b's own stats now
    await criStats(cri.api, { withoutStats });
    expect(cri.callsOf('listPodSandboxStats')).toHaveLength(1);
    expect(cri.callsOf('podSandboxStats')).toEqual([
      { podSandboxId: 'a' },
      { podSandboxId: 'b' },
      { podSandboxId: 'b' },
      { podSandboxId: 'b' },
    ]);
  });

  it('once the sandbox without a cgroup path is gone, the list is asked again', async () => {
    const { cri, setSandboxes } = mixed();
    const withoutStats = new SandboxesWithoutStats();
    await criStats(cri.api, { withoutStats });
    setSandboxes(['b']);
    await criStats(cri.api, { withoutStats }); // learns a is gone
    expect(withoutStats.listMayWork).toBe(true);
    await criStats(cri.api, { withoutStats });
    expect(cri.callsOf('listPodSandboxStats')).toHaveLength(2);
  });

  it('without a memory (the default), every snapshot asks every sandbox', async () => {
    const { cri } = mixed();
    await criStats(cri.api);
    await criStats(cri.api);
    expect(cri.callsOf('listPodSandboxStats')).toHaveLength(2);
    expect(cri.callsOf('podSandboxStats').filter((c) => c.podSandboxId === 'a')).toHaveLength(2);
  });
});

describe('criStats: pod network', () => {
  const eth0 = { name: 'eth0', rxBytes: 500n, rxErrors: 0n, txBytes: 70n, txErrors: 1n };

  it("the runtime's sandbox network, a zero timestamp (containerd 1.6) taken from the sandbox's cpu sample", async () => {
    const cri = runtime(async () => ({
      stats: ['a', 'b'].map((id) => ({
        attributes: { id },
        linux: {
          cpu: { timestamp: 7n * ts, usageCoreNanoSeconds: v(1n) },
          network: { timestamp: 0n, defaultInterface: { name: 'eth0', rxBytes: v(10n), txBytes: v(20n) }, interfaces: [] },
        },
      })),
    }));
    const snap = await criStats(cri.api, { netDev: () => [eth0] });
    expect(snap.pods[0].network).toEqual({
      time: 7n * ts,
      defaultName: 'eth0',
      interfaces: [{ name: 'eth0', rxBytes: 10n, rxErrors: undefined, txBytes: 20n, txErrors: undefined }],
    });
    expect(cri.callsOf('podSandboxStatus')).toEqual([]);
  });

  it('without it (no sandbox stats): /proc/<pid>/net/dev of the sandbox process from the verbose status; failures go without', async () => {
    const cri = runtime(() => Promise.reject(new CriError('unimplemented', 'ListPodSandboxStats', UNIMPLEMENTED)));
    cri.handlers.podSandboxStatus = async (r) => {
      if (r.podSandboxId === 'b') throw new CriError('gone', 'PodSandboxStatus', 5);
      return { status: { id: r.podSandboxId }, info: { info: JSON.stringify({ pid: 4242, sandboxID: r.podSandboxId }) } };
    };
    const asked: number[] = [];
    const snap = await criStats(cri.api, { procNetwork: true, netDev: (pid) => (asked.push(pid), [eth0]), nowNs: () => 9n * ts });
    expect(snap.pods[0].network).toEqual({ time: 9n * ts, interfaces: [eth0] });
    expect(snap.pods[1].network).toBeUndefined();
    expect(asked).toEqual([4242]);
    expect(cri.callsOf('podSandboxStatus')).toEqual([
      { podSandboxId: 'a', verbose: true },
      { podSandboxId: 'b', verbose: true },
    ]);
  });

  it('without procNetwork (eviction, only_cpu_and_memory): no status calls, no network', async () => {
    const cri = runtime(() => Promise.reject(new CriError('unimplemented', 'ListPodSandboxStats', UNIMPLEMENTED)));
    const snap = await criStats(cri.api, { netDev: () => [eth0] });
    expect(snap.pods.map((p) => p.network)).toEqual([undefined, undefined]);
    expect(cri.callsOf('podSandboxStatus')).toEqual([]);
  });

  it('no pid in the verbose info, or an unreadable namespace: no network', async () => {
    const cri = runtime(() => Promise.reject(new CriError('unimplemented', 'ListPodSandboxStats', UNIMPLEMENTED)));
    cri.handlers.podSandboxStatus = async (r) => ({
      status: { id: r.podSandboxId },
      info: r.podSandboxId === 'a' ? { info: '{"pid":0}' } : { info: '{"pid":77}' },
    });
    const asked: number[] = [];
    const snap = await criStats(cri.api, { procNetwork: true, netDev: (pid) => (asked.push(pid), undefined) });
    expect(snap.pods.map((p) => p.network)).toEqual([undefined, undefined]);
    expect(asked).toEqual([77]);
  });
});
