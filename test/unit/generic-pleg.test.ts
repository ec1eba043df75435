import { Registry } from 'prom-client';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { CriUnavailableError } from '../../src/common/errors.js';
import { EARLY_RELIST_MIN_GAP_MS, GenericPleg, type GenericPlegOptions } from '../../src/main/pleg/generic-pleg.js';
import { plegMetrics, type PlegMetrics } from '../../src/main/pleg/pleg-metrics.js';
import type { PlegEvent } from '../../src/runtime/pleg-event.js';
import type { ContainerState, PodStatus, RuntimePod } from '../../src/runtime/types.js';
import { createSharedState, type SharedState } from '../../src/shared/shared-state.js';
import { InlineRunner, type TaskRunner } from '../../src/workers/task-runner.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

const hexId = (n: number) => n.toString(16).padStart(16, '0') + 'ab'.repeat(24);
const SANDBOX = hexId(0xfff);

function runtimePod(uid: string, containers: [number, ContainerState][], sandbox: 'ready' | 'notready' = 'ready'): RuntimePod {
  return {
    uid,
    name: `pod-${uid}`,
    namespace: 'default',
    sandboxes: [{ id: SANDBOX + uid, state: sandbox, createdAt: 1n }].map((s) => ({ ...s, id: hexId(0x5000 + uid.charCodeAt(0)) })),
    containers: containers.map(([n, state]) => ({ id: hexId(n), name: `c${n}`, state, hash: 'h', createdAt: BigInt(n), sandboxId: '' })),
  };
}

function statusOf(p: RuntimePod): PodStatus {
  return {
    uid: p.uid,
    name: p.name,
    namespace: p.namespace,
    ips: ['10.0.0.1'],
    sandboxStatuses: p.sandboxes.map((s) => ({
      id: s.id,
      state: s.state,
      createdAt: s.createdAt,
      attempt: 0,
      ips: ['10.0.0.1'],
      hostNetwork: false,
    })),
    containerStatuses: p.containers.map((c) => ({
      id: c.id,
      name: c.name,
      state: c.state,
      createdAt: c.createdAt,
      startedAt: 0n,
      finishedAt: 0n,
      exitCode: 0,
      reason: '',
      message: '',
      image: 'img',
      imageRef: 'ref',
      restartCount: 0,
      hash: c.hash,
      sandboxId: p.sandboxes[0].id,
    })),
    timestamp: 0,
  };
}

describe('GenericPleg (inline runner, fake runtime)', () => {
  let runtime: FakeRuntime;
  let clock: FakeClock;
  let shared: SharedState;
  let metrics: PlegMetrics;
  let registry: Registry;
  let pleg: GenericPleg;

  function setPods(...pods: RuntimePod[]) {
    runtime.pods = pods;
    runtime.statuses = new Map(pods.map((p) => [p.uid, statusOf(p)]));
  }

  const drain = (): PlegEvent[] => pleg.events.drain();
  const simple = (events: PlegEvent[]) => events.map((e) => `${e.id}:${e.type}:${e.data.slice(0, 16)}`).sort();

  function makePleg(opts: { channelCapacity?: number; mode?: 'parallel' | 'serial' } = {}) {
    pleg = new GenericPleg({
      runner: new InlineRunner(shared.workerInit('unix:///unused.sock'), runtime, clock),
      cache: shared.cache,
      records: shared.records,
      clock,
      logger: silentLogger(),
      metrics,
      ...opts,
    });
  }

  beforeEach(() => {
    runtime = new FakeRuntime();
    clock = new FakeClock();
    shared = createSharedState({ maxPods: 16 });
    registry = new Registry();
    metrics = plegMetrics(registry);
    makePleg();
  });

  it('emits ContainerStarted for new sandboxes and containers, then nothing at steady state', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    const sandboxKey = hexId(0x5000 + 'a'.charCodeAt(0)).slice(0, 16);
    expect(simple(drain())).toEqual([`a:ContainerStarted:${hexId(1).slice(0, 16)}`, `a:ContainerStarted:${sandboxKey}`].sort());
    await pleg.relist();
    expect(drain()).toEqual([]);
  });

  it('delivers full container ids resolved from the inspected status, and caches the status', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    const events = drain();
    expect(events.map((e) => e.data)).toContain(hexId(1));
    const slot = shared.cache.slotOf('a')!;
    expect(shared.cache.read(slot, 'a')?.containerStatuses[0].id).toBe(hexId(1));
  });

  it('emits ContainerDied, then ContainerRemoved, as containers exit and go away', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    drain();
    setPods(runtimePod('a', [[1, 'exited']]));
    await pleg.relist();
    expect(simple(drain())).toEqual([`a:ContainerDied:${hexId(1).slice(0, 16)}`]);
    setPods(runtimePod('a', []));
    await pleg.relist();
    expect(simple(drain())).toEqual([`a:ContainerRemoved:${hexId(1).slice(0, 16)}`]);
  });

  it('a running container removed outright yields Died then Removed (upstream)', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    drain();
    setPods(runtimePod('a', []));
    await pleg.relist();
    expect(drain().map((e) => e.type)).toEqual(['ContainerDied', 'ContainerRemoved']);
  });

  it('a container that dies and is replaced within one period: Died for the old id, Started for the new', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    drain();
    setPods(
      runtimePod('a', [
        [1, 'exited'],
        [2, 'running'],
      ]),
    );
    await pleg.relist();
    expect(simple(drain())).toEqual([`a:ContainerDied:${hexId(1).slice(0, 16)}`, `a:ContainerStarted:${hexId(2).slice(0, 16)}`].sort());
  });

  it('inspects by the ids and states the relist listed, and a steady relist ends in the relist loop with no pool task', async () => {
    const p = runtimePod('a', [[1, 'running']]);
    p.containers[0].sandboxId = p.sandboxes[0].id;
    setPods(p);
    await pleg.relist();
    expect(runtime.calls.known).toEqual([
      {
        sandboxes: [{ id: p.sandboxes[0].id, state: 'ready' }],
        containers: [{ id: hexId(1), sandboxId: p.sandboxes[0].id, state: 'running' }],
      },
    ]);
    const spy = vi.spyOn(InlineRunner.prototype, 'run');
    const lists = runtime.calls.getPods;
    clock.step(1000);
    await pleg.relist();
    expect(runtime.calls.getPods).toBe(lists + 1);
    expect(spy.mock.calls.map(([req]) => req.type)).toEqual([]);
    spy.mockRestore();
    expect(runtime.calls.getPodStatus).toHaveLength(1);
    // The loop set the cache's global timestamp to the quiet relist's start.
    expect(shared.cache.getGlobalTimestamp()).toBe(clock.now());
  });

  it('filters ContainerChanged (created/unknown states) out of delivery', async () => {
    setPods(runtimePod('a', [[1, 'created']]));
    await pleg.relist();
    expect(drain().filter((e) => e.data.startsWith(hexId(1).slice(0, 16)))).toEqual([]);
  });

  it('a failed list sends nothing and does not advance the relist time', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    const t0 = pleg.lastRelistTime();
    drain();
    clock.step(1000);
    runtime.listError = new CriUnavailableError('list_containers: down', 'list_containers', 14);
    setPods(runtimePod('a', [[1, 'exited']]));
    await pleg.relist();
    expect(drain()).toEqual([]);
    expect(pleg.lastRelistTime()).toBe(t0);
    runtime.listError = undefined;
    await pleg.relist();
    expect(drain().map((e) => e.type)).toEqual(['ContainerDied']);
    expect(pleg.lastRelistTime()).toBe(clock.now());
  });

  it('holds a pod’s events when its inspection fails and delivers them after reinspection', async () => {
    setPods(runtimePod('a', [[1, 'running']]), runtimePod('b', [[2, 'running']]));
    runtime.statusErrors.set('a', new CriUnavailableError('podsandbox_status: down', 'podsandbox_status', 14));
    await pleg.relist();
    const first = drain();
    expect(new Set(first.map((e) => e.id))).toEqual(new Set(['b']));
    expect(shared.cache.slotOf('a')).toBeDefined();
    expect(shared.cache.read(shared.cache.slotOf('a')!, 'a')).toBeUndefined();
    runtime.statusErrors.clear();
    await pleg.relist(); // no new diff for a, but it is reinspected
    const second = drain();
    expect(second.map((e) => e.id)).toEqual(['a', 'a']);
    expect(shared.cache.read(shared.cache.slotOf('a')!, 'a')?.containerStatuses).toHaveLength(1);
    expect(runtime.calls.getPodStatus.filter((u) => u === 'a')).toHaveLength(2);
  });

  it('reinspects held pods after its relist loop was replaced (the new loop does not know the main thread holds work)', async () => {
    const inner = new InlineRunner(shared.workerInit('unix:///unused.sock'), runtime, clock);
    let die: ((err: Error) => void) | undefined;
    const runner: TaskRunner = {
      threads: 0,
      run: (request) => inner.run(request),
      close: () => inner.close(),
      relistLoop: () => {
        const conn = inner.relistLoop();
        const died = new Promise<Error>((resolve) => (die = resolve));
        return { api: conn.api, ended: Promise.race([conn.ended, died]) };
      },
    };
    const { logger, records } = captureLogger();
    pleg = new GenericPleg({ runner, cache: shared.cache, records: shared.records, clock, logger, metrics });
    setPods(runtimePod('a', [[1, 'running']]));
    runtime.statusErrors.set('a', new CriUnavailableError('podsandbox_status: down', 'podsandbox_status', 14));
    await pleg.relist();
    expect(drain()).toEqual([]);
    runtime.statusErrors.clear();
    die!(new Error('the relist loop’s worker went away'));
    await vi.waitFor(() => expect(records.map((r) => r.err)).toContain('the relist loop’s worker went away'));
    await pleg.relist(); // a new loop: nothing new in its diff, so it reports the relist as quiet
    expect(drain().map((e) => e.id)).toEqual(['a', 'a']);
    expect(shared.cache.read(shared.cache.slotOf('a')!, 'a')?.containerStatuses).toHaveLength(1);
  });

  it('advances the cache global timestamp only after inspections finish', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    const before = shared.cache.getGlobalTimestamp();
    const start = clock.now();
    await pleg.relist();
    expect(Number.isNaN(before)).toBe(true);
    expect(shared.cache.getGlobalTimestamp()).toBe(start);
  });

  it('timestamps a status read by the relist’s ids at the relist’s start, not when it was read', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    // As CriRuntime: the status is stamped when it is read, here 50 ms after the relist started.
    const read = runtime.getPodStatus.bind(runtime);
    runtime.getPodStatus = async (...args) => {
      clock.step(50);
      return { ...(await read(...args)), timestamp: clock.now() };
    };
    const start = clock.now();
    await pleg.relist();
    expect(runtime.calls.known[0]).toBeDefined();
    const slot = shared.cache.slotOf('a')!;
    expect(shared.cache.read(slot, 'a')?.timestamp).toBe(start);
    // A sync that ended during the relist (after its lists) does not take this status for newer than its changes.
    expect(shared.cache.isNewerThan(slot, start + 10)).toBe(false);
  });

  it('drops events on a full channel and counts them, without blocking', async () => {
    makePleg({ channelCapacity: 3 });
    setPods(
      runtimePod('a', [
        [1, 'running'],
        [2, 'running'],
        [3, 'running'],
      ]),
      runtimePod('b', [[4, 'running']]),
    );
    await pleg.relist(); // 4 containers + 2 sandboxes = 6 events
    expect(pleg.events.length).toBe(3);
    const discarded = (await registry.getSingleMetric('kubelet_pleg_discard_events')!.get()).values[0].value;
    expect(discarded).toBe(3);
  });

  it('is unhealthy before the first relist, healthy after, unhealthy past the 3 min threshold, then healthy again', async () => {
    expect(pleg.healthy()).toEqual({ ok: false, message: 'pleg has yet to be successful' });
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    expect(pleg.healthy().ok).toBe(true);
    runtime.listError = new Error('runtime gone');
    clock.step(3 * 60 * 1000);
    await pleg.relist();
    expect(pleg.healthy().ok).toBe(true); // exactly at the threshold: not yet
    clock.step(1);
    await pleg.relist();
    expect(pleg.healthy()).toEqual({ ok: false, message: 'pleg was last seen active 3m0.001s ago; threshold is 3m0s' });
    runtime.listError = undefined;
    await pleg.relist();
    expect(pleg.healthy().ok).toBe(true);
  });

  it('frees the cache slot of a pod that disappeared from the runtime', async () => {
    setPods(runtimePod('a', [[1, 'running']]));
    await pleg.relist();
    expect(shared.cache.slotOf('a')).toBeDefined();
    setPods();
    await pleg.relist();
    expect(shared.cache.slotOf('a')).toBeUndefined();
  });

  it('serial mode inspects one pod at a time and yields the same events', async () => {
    makePleg({ mode: 'serial' });
    let inFlight = 0;
    let maxInFlight = 0;
    const inner = runtime.getPodStatus.bind(runtime);
    runtime.getPodStatus = async (...args) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        await Promise.resolve();
        return await inner(...args);
      } finally {
        inFlight--;
      }
    };
    setPods(runtimePod('a', [[1, 'running']]), runtimePod('b', [[2, 'running']]), runtimePod('c', [[3, 'running']]));
    await pleg.relist();
    expect(maxInFlight).toBe(1);
    expect(new Set(drain().map((e) => e.id))).toEqual(new Set(['a', 'b', 'c']));
  });

  it('records relist metrics and running pod/container gauges', async () => {
    setPods(
      runtimePod('a', [
        [1, 'running'],
        [2, 'exited'],
      ]),
      runtimePod('b', [[3, 'running']], 'notready'),
    );
    await pleg.relist();
    clock.step(1000);
    await pleg.relist();
    const text = await registry.metrics();
    expect(text).toContain('kubelet_running_pods 1');
    expect(text).toContain('kubelet_running_containers{container_state="running"} 2');
    expect(text).toContain('kubelet_running_containers{container_state="exited"} 1');
    expect(text).toContain('kubelet_pleg_relist_duration_seconds_count 2');
    expect(text).toContain('kubelet_pleg_relist_interval_seconds_count 1');
    expect(text).toMatch(/kubelet_pleg_last_seen_seconds \d+/);
  });
});

/** A GenericPleg of its own over a fake runtime, inline runner and fake clock. */
function standalonePleg(extra: Partial<GenericPlegOptions> = {}) {
  const runtime = new FakeRuntime();
  const shared = createSharedState({ maxPods: 8 });
  const clock = new FakeClock();
  const pleg = new GenericPleg({
    runner: new InlineRunner(shared.workerInit('unix:///unused.sock'), runtime, clock),
    cache: shared.cache,
    records: shared.records,
    clock,
    logger: silentLogger(),
    metrics: plegMetrics(new Registry()),
    ...extra,
  });
  return { runtime, shared, clock, pleg };
}

describe('GenericPleg cache slot release', () => {
  it('frees a released slot at the end of a relist only when the pod holds no runtime state', async () => {
    const { runtime, shared, pleg } = standalonePleg();
    const p = runtimePod('a', [[1, 'running']]);
    runtime.pods = [p];
    runtime.statuses = new Map([['a', statusOf(p)]]);
    await pleg.relist();
    shared.cache.allocate('never-ran'); // a pod synced but removed before it had a sandbox
    pleg.releaseSlotWhenUnused('never-ran');
    pleg.releaseSlotWhenUnused('a'); // still running: must stay
    await pleg.relist();
    expect(shared.cache.slotOf('never-ran')).toBeUndefined();
    expect(shared.cache.slotOf('a')).toBeDefined();
  });
});

describe('GenericPleg early relists (relistSoon)', () => {
  it('coalesces requests into one relist after 20 ms, keeps early relists EARLY_RELIST_MIN_GAP_MS apart, and calls onRelist', async () => {
    let relisted = 0;
    let cacheUpdates = 0;
    const { runtime, clock, pleg } = standalonePleg({
      relistPeriodMs: 60_000,
      onRelist: () => relisted++,
      onCacheUpdated: () => cacheUpdates++,
    });
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    const ac = new AbortController();
    pleg.start(ac.signal);
    await settle();
    const lists = () => runtime.calls.getPods;
    expect(lists()).toBe(1); // the loop's first relist
    expect(relisted).toBe(1);

    const p = runtimePod('a', [[1, 'running']]);
    runtime.pods = [p];
    runtime.statuses = new Map([['a', statusOf(p)]]);
    pleg.relistSoon();
    pleg.relistSoon();
    pleg.relistSoon();
    clock.step(19);
    await settle();
    expect(lists()).toBe(1);
    clock.step(1);
    await settle();
    expect(lists()).toBe(2); // one relist for the three requests
    expect(relisted).toBe(2);
    expect(cacheUpdates).toBe(2); // the quiet first relist and this one, once each is in the cache
    expect(pleg.events.drain().map((e) => `${e.id}:${e.type}`)).toContain('a:ContainerStarted');

    pleg.relistSoon(); // right after the last early relist started: waits until the gap has passed
    clock.step(20);
    await settle();
    expect(lists()).toBe(2);
    clock.step(EARLY_RELIST_MIN_GAP_MS - 21);
    await settle();
    expect(lists()).toBe(2);
    clock.step(1); // the gap after the previous early relist started
    await settle();
    expect(lists()).toBe(3);

    ac.abort();
    pleg.relistSoon(); // after stop: nothing
    clock.step(1000);
    await settle();
    expect(lists()).toBe(3);
    await pleg.stopped();
  });
});
