import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import { pastActiveDeadline } from '../../src/main/kubelet/active-deadline.js';
import { PoolSyncer, type PoolSyncerOptions } from '../../src/main/kubelet/pool-syncer.js';
import { PodWorkers } from '../../src/main/pod-workers/pod-workers.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import type { PodStatus } from '../../src/runtime/types.js';
import type { RequestOf, TaskResults, TaskType } from '../../src/workers/protocol/protocol.js';
import { PodStatusCache } from '../../src/shared/pod-status-cache.js';
import type { TaskRunner } from '../../src/workers/task-runner.js';
import { FakeClock } from '../fakes/fake-clock.js';

/** A TaskRunner that records requests and answers from `answer`. */
class RecordingRunner implements TaskRunner {
  readonly threads = 0;
  readonly requests: { type: string; [k: string]: unknown }[] = [];
  constructor(private readonly answer: (r: { type: string; [k: string]: unknown }) => unknown) {}
  async run<K extends TaskType>(request: RequestOf<K>): Promise<TaskResults[K]> {
    this.requests.push(request);
    return this.answer(request) as TaskResults[K];
  }
  relistLoop(): never {
    throw new Error('the pod syncer never starts a relist loop');
  }
  async close(): Promise<void> {}
}

const pod = (): Pod =>
  PodSchema.parse({
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
    spec: { restartPolicy: 'Always', containers: [{ name: 'app', image: 'busybox:1' }] },
  });

const runningStatus = (ready: boolean): PodStatus => ({
  uid: 'uid-1',
  name: 'web',
  namespace: 'default',
  ips: ready ? ['10.1.0.5'] : [],
  sandboxStatuses: [
    { id: 'sb1', state: ready ? 'ready' : 'notready', createdAt: 1n, attempt: 0, ips: ready ? ['10.1.0.5'] : [], hostNetwork: false },
  ],
  containerStatuses: [
    {
      id: 'c1',
      name: 'app',
      state: ready ? 'running' : 'exited',
      createdAt: 2n,
      startedAt: 2n,
      finishedAt: ready ? 0n : 3n,
      exitCode: ready ? 0 : 143,
      reason: '',
      message: '',
      image: 'busybox:1',
      imageRef: 'busybox:1',
      restartCount: 0,
      hash: '',
      sandboxId: 'sb1',
    },
  ],
  timestamp: 0,
});

type Answer = (r: { type: string; [k: string]: unknown }) => unknown;
const defaultAnswer: Answer = (r) =>
  r.type === 'terminatePod'
    ? { stoppedContainers: 1, stoppedSandboxes: 1, removed: false, events: [], status: runningStatus(false) }
    : r.type === 'syncPod'
      ? { plan: '', acted: false, reasons: {}, backoff: {}, events: [] }
      : {};

function setup(answer: Answer = defaultAnswer, extra: Partial<PoolSyncerOptions> = {}) {
  const clock = new FakeClock();
  const cache = PodStatusCache.create({ capacity: 4 });
  const podManager = new PodManager();
  const statusManager = new StatusManager();
  const runner = new RecordingRunner(answer);
  const syncer = new PoolSyncer({
    runner,
    cache,
    podManager,
    statusManager,
    node: {
      name: 'n1',
      ip: '192.0.2.1',
      podLogsDir: '/tmp',
      containerLogsDir: '',
      clusterDNS: [],
      clusterDomain: '',
      resolvConf: '',
      memoryCapacityBytes: 1,
    },
    clock,
    logger: pino({ level: 'silent' }),
    networkError: () => undefined,
    recorder: { record: () => undefined },
    ...extra,
  });
  return { clock, cache, podManager, statusManager, runner, syncer };
}

const ctx = { signal: new AbortController().signal };

describe('PoolSyncer: a sync that acted asks for an early relist', () => {
  it('calls runtimeChanged after a sync task that acted, not after one that did nothing', async () => {
    let acted = false;
    let changed = 0;
    const { syncer } = setup((r) => (r.type === 'syncPod' ? { plan: '', acted, reasons: {}, backoff: {}, events: [] } : defaultAnswer(r)), {
      runtimeChanged: () => changed++,
    });
    const p = pod();
    await syncer.syncPod(ctx, 'sync', p);
    expect(changed).toBe(0);
    acted = true;
    await syncer.syncPod(ctx, 'sync', p);
    expect(changed).toBe(1);
  });
});

describe('PoolSyncer: a sync waits for a cached status newer than its previous sync (upstream GetNewerThan, bounded)', () => {
  const settle = async () => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };

  it('dispatches the task once a relist publishes past the previous sync end, without reading the runtime', async () => {
    const { syncer, runner, cache, clock } = setup(defaultAnswer, { cacheWaitMs: 1000 });
    const p = pod();
    cache.setGlobalTimestamp(clock.now());
    clock.step(10);
    await syncer.syncPod(ctx, 'sync', p); // first sync: nothing to wait for
    expect(runner.requests).toHaveLength(1);
    const end = clock.now();
    const second = syncer.syncPod(ctx, 'sync', p);
    await settle();
    clock.step(100);
    await settle();
    expect(runner.requests).toHaveLength(1); // the cache is older than the first sync's end: waiting
    cache.setGlobalTimestamp(end + 50); // a relist that started after that end
    syncer.cacheUpdated(); // what the PLEG calls when that relist is in the cache
    await second; // without the clock moving
    expect(runner.requests).toHaveLength(2);
    expect(clock.now() - end).toBe(100);
  });

  it('gives up after cacheWaitMs and lets the task read the runtime; no wait without cacheWaitMs', async () => {
    const waiting = setup(defaultAnswer, { cacheWaitMs: 1000 });
    const p = pod();
    await waiting.syncer.syncPod(ctx, 'sync', p);
    const start = waiting.clock.now();
    const second = waiting.syncer.syncPod(ctx, 'sync', p);
    for (let t = 0; t < 60 && waiting.runner.requests.length < 2; t++) {
      await settle();
      waiting.clock.step(20);
    }
    await second;
    expect(waiting.runner.requests).toHaveLength(2);
    expect(waiting.clock.now() - start).toBeGreaterThanOrEqual(1000);

    const plain = setup();
    await plain.syncer.syncPod(ctx, 'sync', p);
    await plain.syncer.syncPod(ctx, 'sync', p); // resolves with no clock step
    expect(plain.runner.requests).toHaveLength(2);
  });
});

describe('PoolSyncer: termination leaves removal to container GC', () => {
  it('a pod gone from every source is not removed when terminated', async () => {
    const { syncer, runner } = setup();
    await syncer.syncTerminatedPod(ctx, pod());
    expect(runner.requests).toEqual([]);
  });

  it('a pod it terminated, gone from every source, may have a stale cache until a relist that started after it completes', async () => {
    const { syncer, cache, clock } = setup();
    cache.setGlobalTimestamp(clock.now());
    expect(syncer.cachePredatesTermination('uid-1')).toBe(false); // never terminated here
    clock.step(100);
    await syncer.syncTerminatedPod(ctx, pod());
    const end = clock.now();
    expect(syncer.cachePredatesTermination('uid-1')).toBe(true);
    cache.setGlobalTimestamp(end); // a relist that started at the same instant: not after
    expect(syncer.cachePredatesTermination('uid-1')).toBe(true);
    cache.setGlobalTimestamp(end + 1);
    expect(syncer.cachePredatesTermination('uid-1')).toBe(false);
  });

  it('an orphan known only to the runtime is killed with a 1 s grace and not removed', async () => {
    const { syncer, runner } = setup();
    await syncer.syncTerminatingRuntimePod(ctx, { uid: 'uid-9', name: 'x', namespace: 'default', sandboxes: [], containers: [] });
    expect(runner.requests).toHaveLength(1);
    expect(runner.requests[0]).toMatchObject({ type: 'terminatePod', input: { gracePeriodSeconds: 1, remove: false } });
  });
});

describe('PoolSyncer: the final status comes from the runtime after the stop (upstream re-read, GetNewerThan)', () => {
  it('a terminated pod does not keep PodReadyToStartContainers=True or a running container from the stale cache', async () => {
    const { syncer, cache, statusManager, podManager } = setup();
    const p = pod();
    podManager.addOrUpdate(p);
    // The cache still holds the running pod (the PLEG has not relisted since the stop).
    const slot = cache.allocate('uid-1');
    cache.write(slot, runningStatus(true));
    await syncer.syncTerminatingPod(ctx, p, 5);
    await syncer.syncTerminatedPod(ctx, p);
    const s = statusManager.getPodStatus('uid-1')!;
    expect(s.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status).toBe('False');
    expect(s.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(143);
    expect(s.containerStatuses?.[0]?.state?.running).toBeUndefined();
  });
});

describe('activeDeadlineSeconds (upstream activeDeadlineHandler)', () => {
  const deadlinePod = (): Pod => {
    const p = pod();
    p.spec.activeDeadlineSeconds = 30;
    return p;
  };

  it('pastActiveDeadline counts from the kubelet status startTime, inclusive', () => {
    const start = Date.parse('2026-11-23T00:00:00Z');
    const status = { startTime: '2026-11-23T00:00:00Z' };
    expect(pastActiveDeadline(deadlinePod(), status, start + 29_999)).toBe(false);
    expect(pastActiveDeadline(deadlinePod(), status, start + 30_000)).toBe(true);
    expect(pastActiveDeadline(deadlinePod(), undefined, start + 99_000)).toBe(false);
    expect(pastActiveDeadline(pod(), status, start + 99_000)).toBe(false);
  });

  it('a pod past its deadline is Failed with DeadlineExceeded and its sync reports terminal (so it is killed)', async () => {
    const { syncer, statusManager, clock, runner } = setup();
    const p = deadlinePod();
    const first = await syncer.syncPod(ctx, 'create', p);
    expect(first.terminal).toBe(false);
    expect(runner.requests.filter((r) => r.type === 'syncPod')).toHaveLength(1);
    clock.step(30_000);
    const second = await syncer.syncPod(ctx, 'sync', p);
    expect(second.terminal).toBe(true);
    const s = statusManager.getPodStatus('uid-1')!;
    expect(s).toMatchObject({
      phase: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'Pod was active on the node longer than the specified deadline',
    });
    expect(s.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    // No further container starts once the deadline passed.
    expect(runner.requests.filter((r) => r.type === 'syncPod')).toHaveLength(1);
  });
});

describe('a shortened grace period during termination stops the containers again (upstream cancels the running kill)', () => {
  it('the second kill with a shorter grace period is dispatched while the first is still running', async () => {
    const pending: (() => void)[] = [];
    const { clock, syncer, runner } = setup((r) => {
      if (r.type !== 'terminatePod') return {};
      return new Promise((resolve) =>
        pending.push(() =>
          resolve({ stoppedContainers: 1, stoppedSandboxes: 1, removed: false, events: [], status: runningStatus(false) }),
        ),
      );
    });
    const workers = new PodWorkers({ syncer, clock, random: () => 0 });
    const p = pod();
    p.spec.terminationGracePeriodSeconds = 30;
    workers.update({ pod: p, updateType: 'kill' });
    const kills = () =>
      runner.requests
        .filter((r) => r.type === 'terminatePod')
        .map((r) => (r as unknown as { input: { gracePeriodSeconds: number } }).input.gracePeriodSeconds);
    await vi.waitFor(() => expect(kills()).toEqual([30]));
    workers.update({ pod: p, updateType: 'kill', killPodOptions: { gracePeriodSeconds: 5 } });
    await vi.waitFor(() => expect(kills()).toEqual([30, 5]));
    for (const release of pending) release();
    await workers.idle();
    expect(workers.stateOf('uid-1')).toBe('finished');
  });
});
