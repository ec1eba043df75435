import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { Pod } from '../../src/api/pod.js';
import { EvictionManager, type EvictionManagerOptions } from '../../src/main/eviction/eviction-manager.js';
import { parseThresholds, type EvictionConfig } from '../../src/main/eviction/thresholds.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeEvictionStats } from '../fakes/fake-eviction-stats.js';

const MI = 1024n * 1024n;
const CAP = 4096n * MI;

function pod(
  name: string,
  resources: { requests?: Record<string, string>; limits?: Record<string, string> } = {},
  extra: Partial<Pod> = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...extra.metadata },
    spec: { containers: [{ name, image: 'busybox', resources }], ...extra.spec },
  };
}
const guaranteed = (name: string) => pod(name, { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '100m', memory: '100Mi' } });

interface Harness {
  m: EvictionManager;
  stats: FakeEvictionStats;
  clock: FakeClock;
  killed: { pod: string; grace: number; message: string }[];
  events: { reason: string; message: string; kind: string }[];
  reclaims: string[];
  pods: Pod[];
}

function harness(cfg: Partial<EvictionConfig>, opts: Partial<EvictionManagerOptions> = {}): Harness {
  const clock = new FakeClock();
  const stats = new FakeEvictionStats();
  const h: Harness = { m: undefined as unknown as EvictionManager, stats, clock, killed: [], events: [], reclaims: [], pods: [] };
  h.m = new EvictionManager({
    thresholds: parseThresholds({
      evictionHard: {},
      evictionSoft: {},
      evictionSoftGracePeriod: {},
      evictionMinimumReclaim: {},
      evictionMaxPodGracePeriod: 0,
      ...cfg,
    }),
    stats,
    activePods: () => h.pods.filter((p) => !h.killed.some((k) => k.pod === p.metadata.name)),
    killPod: (p, grace, message) => h.killed.push({ pod: p.metadata.name!, grace, message }),
    podCleanedUp: () => true,
    reclaimer: {
      deleteAllUnusedContainers: async () => void h.reclaims.push('containers'),
      deleteUnusedImages: async () => void h.reclaims.push('images'),
    },
    recorder: { record: (ref, _type, reason, message) => h.events.push({ reason, message, kind: ref.kind ?? '' }) },
    nodeName: 'n1',
    pressureTransitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 30,
    clock,
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
    ...opts,
  });
  return h;
}

const memUsage = (p: Pod, mi: bigint) => ({
  uid: p.metadata.uid!,
  memoryWorkingSetBytes: mi * MI,
  containers: [{ name: p.metadata.name!, memoryWorkingSetBytes: mi * MI }],
  volumes: [],
});

describe('EvictionManager: memory pressure (upstream TestMemoryPressure)', () => {
  it('evicts the BestEffort pod over its request, keeps the Guaranteed one, refuses BestEffort pods meanwhile', async () => {
    const h = harness({ evictionHard: { 'memory.available': '1Gi' } });
    const be = pod('best-effort');
    const g = guaranteed('guaranteed');
    h.pods.push(g, be);
    h.stats.setPod(memUsage(be, 400n)).setPod(memUsage(g, 90n));
    h.stats.set('memory.available', { available: 2048n * MI, capacity: CAP });
    expect(await h.m.synchronize()).toEqual([]);
    expect(h.m.underPressure('MemoryPressure')).toBe(false);
    expect(h.m.admit(pod('new-be'))).toEqual({ admit: true });

    h.stats.set('memory.available', { available: 500n * MI, capacity: CAP });
    const evicted = await h.m.synchronize();
    expect(evicted.map((p) => p.metadata.name)).toEqual(['best-effort']);
    expect(h.killed).toEqual([
      {
        pod: 'best-effort',
        grace: 0,
        message: 'The node was low on resource: memory. Container best-effort was using 400Mi, which exceeds its request of 0. ',
      },
    ]);
    expect(h.events.filter((e) => e.kind === 'Pod')).toEqual([{ kind: 'Pod', reason: 'Evicted', message: h.killed[0].message }]);
    expect(h.events.some((e) => e.reason === 'EvictionThresholdMet' && e.message === 'Attempting to reclaim memory')).toBe(true);
    // Memory has no node-level reclaim.
    expect(h.reclaims).toEqual([]);
    expect(h.m.underPressure('MemoryPressure')).toBe(true);
    expect(h.m.admit(pod('new-be'))).toEqual({ admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
    expect(h.m.admit(guaranteed('new-g'))).toEqual({ admit: true });
    // A BestEffort pod tolerating the memory-pressure taint is admitted.
    const tolerating = pod(
      'tol',
      {},
      { spec: { containers: [], tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] } },
    );
    expect(h.m.admit(tolerating)).toEqual({ admit: true });
  });

  it('holds the condition for the transition period after the signal clears', async () => {
    const h = harness({ evictionHard: { 'memory.available': '1Gi' } }, { pressureTransitionPeriodMs: 30_000 });
    h.stats.set('memory.available', { available: 500n * MI, capacity: CAP });
    await h.m.synchronize();
    expect(h.m.underPressure('MemoryPressure')).toBe(true);
    h.stats.set('memory.available', { available: 3000n * MI, capacity: CAP });
    h.clock.step(29_999);
    await h.m.synchronize();
    expect(h.m.underPressure('MemoryPressure')).toBe(true);
    h.clock.step(1);
    await h.m.synchronize();
    expect(h.m.underPressure('MemoryPressure')).toBe(false);
  });

  it('a soft threshold evicts only after its grace period, with evictionMaxPodGracePeriod', async () => {
    const h = harness({ evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': 60_000 } });
    const be = pod('be');
    h.pods.push(be);
    h.stats.setPod(memUsage(be, 100n)).set('memory.available', { available: 500n * MI, capacity: CAP });
    expect(await h.m.synchronize()).toEqual([]);
    // The condition is reported at once; eviction waits.
    expect(h.m.underPressure('MemoryPressure')).toBe(true);
    h.clock.step(59_000);
    expect(await h.m.synchronize()).toEqual([]);
    h.clock.step(1_000);
    expect((await h.m.synchronize()).map((p) => p.metadata.name)).toEqual(['be']);
    expect(h.killed[0].grace).toBe(30);
  });

  it('keeps evicting until the minimum reclaim is free', async () => {
    const h = harness({ evictionHard: { 'memory.available': '1Gi' }, evictionMinimumReclaim: { 'memory.available': '500Mi' } });
    const a = pod('a');
    const b = pod('b');
    h.pods.push(a, b);
    h.stats
      .setPod(memUsage(a, 300n))
      .setPod(memUsage(b, 200n))
      .set('memory.available', { available: 900n * MI, capacity: CAP });
    expect((await h.m.synchronize()).map((p) => p.metadata.name)).toEqual(['a']);
    // Above the threshold now, but not by the minimum reclaim.
    h.stats.set('memory.available', { available: 1200n * MI, capacity: CAP });
    h.clock.step(10_000);
    expect((await h.m.synchronize()).map((p) => p.metadata.name)).toEqual(['b']);
    h.stats.set('memory.available', { available: 1600n * MI, capacity: CAP });
    h.clock.step(10_000);
    expect(await h.m.synchronize()).toEqual([]);
  });

  it('never evicts static, mirror or system-critical pods', async () => {
    const h = harness({ evictionHard: { 'memory.available': '1Gi' } });
    const stat = pod('static', {}, { metadata: { annotations: { 'kubernetes.io/config.source': 'file' } } });
    const crit = pod('critical', {}, { spec: { containers: [], priority: 2_000_000_000 } });
    h.pods.push(stat, crit);
    h.stats
      .setPod(memUsage(stat, 900n))
      .setPod(memUsage(crit, 900n))
      .set('memory.available', { available: 10n * MI, capacity: CAP });
    expect(await h.m.synchronize()).toEqual([]);
    expect(h.killed).toEqual([]);
    expect(h.m.admit(stat)).toEqual({ admit: true });
  });
  it('says once per pass, not once per pod, that critical pods cannot be evicted', async () => {
    type Line = { level: number; msg: string; count?: number; pods?: string[]; more?: number };
    const lines: Line[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Line) });
    const h = harness({ evictionHard: { 'memory.available': '1Gi' } }, { logger });
    for (let i = 0; i < 20; i++) {
      const p = pod(`static-${i}`, {}, { metadata: { annotations: { 'kubernetes.io/config.source': 'file' } } });
      h.pods.push(p);
      h.stats.setPod(memUsage(p, 40n));
    }
    h.stats.set('memory.available', { available: 10n * MI, capacity: CAP });
    await h.m.synchronize();
    await h.m.synchronize();
    const errors = lines.filter((l) => l.level >= 50);
    expect(errors.map((e) => e.msg)).toEqual([
      'eviction manager: cannot evict critical pods',
      'eviction manager: cannot evict critical pods',
    ]);
    expect(errors[0]).toMatchObject({ count: 20, more: 15 });
    expect(errors[0].pods).toHaveLength(5);
    expect(h.killed).toEqual([]);
  });
});

describe('EvictionManager: disk pressure', () => {
  const withVolume = (name: string, extra: Record<string, unknown> = {}) =>
    pod(name, {}, { spec: { containers: [{ name, image: 'x' }], volumes: [{ name: 'data', emptyDir: {} }], ...extra } });

  it('reclaims dead containers and images first; no eviction when that frees enough', async () => {
    const h = harness({ evictionHard: { 'nodefs.available': '30%' } });
    h.pods.push(withVolume('w'));
    h.stats.set('nodefs.available', { available: 10n, capacity: 100n });
    h.stats.beforeGet = (call) => {
      if (call === 2) h.stats.set('nodefs.available', { available: 50n, capacity: 100n });
    };
    expect(await h.m.synchronize()).toEqual([]);
    expect(h.reclaims).toEqual(['containers', 'images']);
    expect(h.killed).toEqual([]);
    expect(h.m.underPressure('DiskPressure')).toBe(true);
    expect(h.m.admit(guaranteed('g'))).toEqual({ admit: false, reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ' });
  });

  it('then evicts the pod using the most disk, not the one within its request', async () => {
    const h = harness({ evictionHard: { 'nodefs.available': '30%' } });
    const writer = withVolume('writer');
    const keeper = withVolume('keeper');
    keeper.spec.containers[0].resources = { requests: { 'ephemeral-storage': '100Mi' } };
    h.pods.push(keeper, writer);
    h.stats.set('nodefs.available', { available: 10n * MI, capacity: 64n * MI });
    h.stats.setPod({
      uid: writer.metadata.uid!,
      containers: [{ name: 'writer', rootfs: { usedBytes: 4096n }, logs: { usedBytes: 0n } }],
      volumes: [{ name: 'data', usedBytes: 40n * MI }],
    });
    h.stats.setPod({
      uid: keeper.metadata.uid!,
      containers: [{ name: 'keeper', rootfs: { usedBytes: 4096n }, logs: { usedBytes: 0n } }],
      volumes: [{ name: 'data', usedBytes: 1n * MI }],
    });
    expect((await h.m.synchronize()).map((p) => p.metadata.name)).toEqual(['writer']);
    expect(h.reclaims).toEqual(['containers', 'images']);
    expect(h.killed[0].message).toBe(
      'The node was low on resource: ephemeral-storage. Container writer was using 4Ki, which exceeds its request of 0. ',
    );
  });

  it('with a dedicated image fs, nodefs pressure has nothing node-level to reclaim', async () => {
    const h = harness({ evictionHard: { 'nodefs.available': '30%' } });
    h.stats.dedicatedImageFs = true;
    h.pods.push(withVolume('w'));
    h.stats.set('nodefs.available', { available: 10n, capacity: 100n });
    await h.m.synchronize();
    expect(h.reclaims).toEqual([]);
    expect(h.killed.map((k) => k.pod)).toEqual(['w']);
  });

  it('evicts pods over their emptyDir sizeLimit even without node pressure', async () => {
    const h = harness({ evictionHard: { 'nodefs.available': '10%' } });
    const over = pod('over', {}, { spec: { containers: [], volumes: [{ name: 'data', emptyDir: { sizeLimit: '8Mi' } }] } });
    const within = pod('within', {}, { spec: { containers: [], volumes: [{ name: 'data', emptyDir: { sizeLimit: '8Mi' } }] } });
    h.pods.push(over, within);
    h.stats.set('nodefs.available', { available: 90n, capacity: 100n });
    h.stats.setPod({ uid: over.metadata.uid!, containers: [], volumes: [{ name: 'data', usedBytes: 9n * MI }] });
    h.stats.setPod({ uid: within.metadata.uid!, containers: [], volumes: [{ name: 'data', usedBytes: 7n * MI }] });
    expect((await h.m.synchronize()).map((p) => p.metadata.name)).toEqual(['over']);
    expect(h.killed).toEqual([{ pod: 'over', grace: 0, message: 'Usage of EmptyDir volume "data" exceeds the limit "8Mi". ' }]);
    expect(h.m.underPressure('DiskPressure')).toBe(false);
  });

  it('critical pods over their limits are not evicted, and said once per pass, not once per pod', async () => {
    type Line = { level: number; msg: string; count?: number };
    const lines: Line[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Line) });
    const h = harness({ evictionHard: { 'nodefs.available': '10%' } }, { logger });
    h.stats.set('nodefs.available', { available: 90n, capacity: 100n });
    for (let i = 0; i < 10; i++) {
      const p = pod(
        `static-${i}`,
        {},
        {
          metadata: { annotations: { 'kubernetes.io/config.source': 'file' } },
          spec: { containers: [], volumes: [{ name: 'data', emptyDir: { sizeLimit: '1Mi' } }] },
        },
      );
      h.pods.push(p);
      h.stats.setPod({ uid: p.metadata.uid!, containers: [], volumes: [{ name: 'data', usedBytes: 9n * MI }] });
    }
    expect(await h.m.synchronize()).toEqual([]);
    expect(h.killed).toEqual([]);
    const errors = lines.filter((l) => l.level >= 50);
    expect(errors.map((e) => e.msg)).toEqual(['eviction manager: cannot evict critical pods']);
    expect(errors[0]).toMatchObject({ count: 10 });
  });

  it('leaves pods over their limits alone with localStorageCapacityIsolation false', async () => {
    const h = harness({}, { localStorageCapacityIsolation: false });
    const over = pod('over', {}, { spec: { containers: [], volumes: [{ name: 'data', emptyDir: { sizeLimit: '1Mi' } }] } });
    h.pods.push(over);
    h.stats.setPod({ uid: over.metadata.uid!, containers: [], volumes: [{ name: 'data', usedBytes: 9n * MI }] });
    expect(await h.m.synchronize()).toEqual([]);
    expect(h.killed).toEqual([]);
  });
});

describe('EvictionManager: loop', () => {
  it('synchronizes each monitoring period and survives a failed stats read', async () => {
    const h = harness({ evictionHard: { 'memory.available': '1Gi' } }, { monitoringPeriodMs: 10_000 });
    h.stats.failWith = new Error('stats down');
    const ac = new AbortController();
    const done = h.m.start(ac.signal);
    const flush = () => new Promise((r) => setImmediate(r));
    await flush();
    expect(h.stats.calls).toBe(1);
    h.stats.failWith = undefined;
    h.stats.set('memory.available', { available: 10n * MI, capacity: CAP });
    h.clock.step(9_999);
    await flush();
    expect(h.stats.calls).toBe(1);
    h.clock.step(1);
    await flush();
    expect(h.stats.calls).toBe(2);
    expect(h.m.underPressure('MemoryPressure')).toBe(true);
    ac.abort();
    await done;
  });
});

describe('EvictionManager: the pods are measured only when a decision reads them', () => {
  const bestEffort = pod('be');

  it('reads only the node while no threshold is met and no pod has a local storage limit', async () => {
    const h = harness({ evictionHard: { 'memory.available': '1Gi', 'nodefs.available': '10%' } });
    h.pods.push(bestEffort, guaranteed('g'));
    h.stats.set('memory.available', { available: 3000n * MI, capacity: CAP });
    h.stats.set('nodefs.available', { available: 90n * MI, capacity: 100n * MI });
    await h.m.synchronize();
    await h.m.synchronize();
    expect([h.stats.calls, h.stats.podCalls]).toEqual([2, 0]);
  });

  it('reads the pods to rank them once a threshold is met', async () => {
    const h = harness({ evictionHard: { 'memory.available': '1Gi' } });
    h.pods.push(bestEffort, guaranteed('g'));
    h.stats.set('memory.available', { available: 500n * MI, capacity: CAP });
    h.stats.setPod(memUsage(bestEffort, 300n)).setPod(memUsage(h.pods[1], 50n));
    expect((await h.m.synchronize()).map((p) => p.metadata.name)).toEqual(['be']);
    expect(h.stats.podCalls).toBe(1);
  });

  it('reads the pods every pass while an active pod has a local storage limit, unless isolation is off', async () => {
    const limited = pod(
      'limited',
      {},
      { spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', emptyDir: { sizeLimit: '1Mi' } }] } },
    );
    const withLimit = pod('eph', { limits: { 'ephemeral-storage': '1Gi' } });
    for (const [p, isolation, reads] of [
      [limited, true, 2],
      [withLimit, true, 2],
      [limited, false, 0],
    ] as const) {
      const h = harness({}, { localStorageCapacityIsolation: isolation });
      h.pods.push(bestEffort, p);
      await h.m.synchronize();
      await h.m.synchronize();
      expect(h.stats.podCalls, `${p.metadata.name} isolation=${isolation}`).toBe(reads);
    }
  });

  it('reads the pods every pass for a threshold on allocatableMemory.available, and acts on it', async () => {
    const h = harness({ evictionHard: { 'allocatableMemory.available': '1Gi' } });
    h.pods.push(bestEffort);
    h.stats.set('allocatableMemory.available', { available: 3000n * MI, capacity: CAP });
    h.stats.setPod(memUsage(bestEffort, 300n));
    expect(await h.m.synchronize()).toEqual([]);
    expect(h.stats.podCalls).toBe(1);
    h.stats.set('allocatableMemory.available', { available: 500n * MI, capacity: CAP });
    expect((await h.m.synchronize()).map((p) => p.metadata.name)).toEqual(['be']);
    expect(h.stats.podCalls).toBe(2);
  });
});
