/**
 * The PLEG suite on a real piscina pool against the simulated runtime, for
 * both PLEGs: generic (relists driven by the test) and evented (events from
 * the sim's GetContainerEvents stream through the container-events worker,
 * with no relist in between): events for create/start/die/remove with full
 * ids, the SAB cache filled by workers, and a worker killed mid-task being
 * replaced. Evented-only: fallback to the generic relist when the runtime
 * does not implement the stream, and after repeated stream failures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { WorkerCrashedError } from '../../src/common/errors.js';
import { CriClient } from '../../src/cri/client.js';
import { realClock } from '../../src/common/clock.js';
import { WorkerContainerEventSource } from '../../src/main/pleg/container-event-source.js';
import { EventedPleg } from '../../src/main/pleg/evented-pleg.js';
import { GenericPleg } from '../../src/main/pleg/generic-pleg.js';
import { eventedPlegMetrics, plegMetrics } from '../../src/main/pleg/pleg-metrics.js';
import { BoundedQueue } from '../../src/main/pleg/bounded-queue.js';
import { captureLogger } from '../helpers/capture-logger.js';
import type { PlegEvent } from '../../src/runtime/pleg-event.js';
import { runRawPod } from '../../src/sim/populate.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { createSharedState, type SharedState } from '../../src/shared/shared-state.js';
import { PoolRunner } from '../../src/workers/task-runner.js';
import { pollUntil } from '../helpers/poll.js';

type Mode = 'generic' | 'evented';

/** The value of an unlabelled sample in the registry's exposition text (0 when absent). */
async function sampleOf(registry: Registry, sample: string): Promise<number> {
  const m = new RegExp(`^${sample} (\\S+)$`, 'm').exec(await registry.metrics());
  return m ? Number(m[1]) : 0;
}

describe.each<Mode>(['generic', 'evented'])('%s PLEG on the worker pool against kubelet-ts-sim', (mode) => {
  let dir: string;
  let sim: SimRuntimeHandle;
  let cri: CriClient;
  let shared: SharedState;
  let runner: PoolRunner;
  let pleg: GenericPleg;
  let evented: EventedPleg | undefined;
  let source: WorkerContainerEventSource | undefined;
  const stop = new AbortController();
  const events = new BoundedQueue<PlegEvent>(1000);
  const registry = new Registry();
  let received: PlegEvent[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-pleg-'));
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
    cri = new CriClient({ runtimeEndpoint: sim.endpoint });
    shared = createSharedState({ maxPods: 32 });
    const init = shared.workerInit(sim.endpoint, { timeoutMs: 30_000 });
    runner = new PoolRunner(init, { threads: 2 });
    const metrics = plegMetrics(registry);
    const sink = (e: PlegEvent) => events.offer(e);
    pleg = new GenericPleg({
      runner,
      cache: shared.cache,
      records: shared.records,
      clock: realClock,
      logger: silentLogger(),
      metrics,
      sink,
    });
    if (mode === 'evented') {
      source = new WorkerContainerEventSource(init);
      evented = new EventedPleg({
        generic: pleg,
        source,
        eventedMetrics: eventedPlegMetrics(registry),
      });
      evented.start(stop.signal);
      await pollUntil(
        'the first relist and an open event stream',
        () => pleg.lastRelistTime() !== undefined && sim.control.stats().events.subscribers === 1,
      );
    }
  });

  afterAll(async () => {
    stop.abort();
    await evented?.stopped();
    await runner?.close();
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const drain = (): PlegEvent[] => events.drain();
  const relists = () => sampleOf(registry, 'kubelet_pleg_relist_duration_seconds_count');

  /**
   * Generic: one relist, then its events. Evented: waits until the events for
   * `uid` satisfy `done` (no relist runs: the stream delivered them).
   */
  async function next(uid: string, done: (evs: PlegEvent[]) => boolean): Promise<PlegEvent[]> {
    if (mode === 'generic') {
      await pleg.relist();
      received = drain().filter((e) => e.id === uid);
      return received;
    }
    const before = await relists();
    received = [];
    await pollUntil(`events for ${uid}`, () => {
      received.push(...drain().filter((e) => e.id === uid));
      return done(received);
    });
    expect(await relists()).toBe(before);
    return received;
  }

  it('runs tasks on the pool’s worker threads, not the main thread', async () => {
    const threads = await pollUntil('two live workers', () => runner.workers().length === 2 && runner.workers().map((w) => w.threadId));
    expect(new Set(threads).size).toBe(2);
    const { threadId } = await runner.run({ type: 'ping' });
    expect(threads).toContain(threadId);
    expect(threadId).not.toBe(0);
  });

  it('reports start, death and removal with full ids, and caches the status with the pod IP', async () => {
    if (mode === 'generic') await pleg.relist();
    drain();
    const pod = await runRawPod(cri, { uid: 'pleg-uid-1', name: 'p1', containers: [{ name: 'app', command: ['sleep', 'infinity'] }] });
    const listsBefore = sim.control.stats().calls.ListPodSandbox ?? 0;
    const started = await next('pleg-uid-1', (evs) => evs.length >= 2);
    // Generic: the relist's one list; the new pod is inspected by the ids it listed (no filtered re-list).
    if (mode === 'generic') expect((sim.control.stats().calls.ListPodSandbox ?? 0) - listsBefore).toBe(1);
    expect(started.map((e) => `${e.type}:${e.data}`).sort()).toEqual(
      [`ContainerStarted:${pod.sandboxId}`, `ContainerStarted:${pod.containerIds[0]}`].sort(),
    );
    const slot = shared.cache.slotOf('pleg-uid-1')!;
    const status = shared.cache.read(slot, 'pleg-uid-1')!;
    expect(status.name).toBe('p1');
    expect(status.sandboxStatuses[0].ips[0]).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(status.containerStatuses[0]).toMatchObject({ id: pod.containerIds[0], name: 'app', state: 'running' });

    sim.control.killContainer(pod.containerIds[0], 1);
    expect(await next('pleg-uid-1', (evs) => evs.length >= 1)).toEqual([
      { id: 'pleg-uid-1', type: 'ContainerDied', data: pod.containerIds[0] },
    ]);
    expect(shared.cache.read(slot, 'pleg-uid-1')!.containerStatuses[0]).toMatchObject({ state: 'exited', exitCode: 1 });

    await cri.removeContainer({ containerId: pod.containerIds[0] });
    // The generic diff knows the container had exited: Removed only. The evented PLEG reports a deletion as
    // Died then Removed, as upstream's processCRIEvent does.
    const removed = await next('pleg-uid-1', (evs) => evs.some((e) => e.type === 'ContainerRemoved'));
    expect(removed.map((e) => e.type)).toEqual(mode === 'generic' ? ['ContainerRemoved'] : ['ContainerDied', 'ContainerRemoved']);
    expect(removed.every((e) => pod.containerIds[0].startsWith(e.data))).toBe(true); // generic: the id's key (the container is gone)
  });

  it('replaces a worker killed mid-task; the task fails with WorkerCrashedError and the next one succeeds', async () => {
    sim.control.setLatency('ListContainers', { kind: 'fixed', ms: 60_000 });
    const before = sim.control.stats().calls.ListContainers ?? 0;
    const inFlight = runner.run({ type: 'gcList' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await pollUntil('the relist to reach the runtime', () => (sim.control.stats().calls.ListContainers ?? 0) > before);
    await Promise.all(runner.workers().map((w) => w.terminate()));
    const err = await inFlight;
    expect(err).toBeInstanceOf(WorkerCrashedError);
    expect((err as Error).message).toMatch(/worker thread failed while running task "gcList"/);
    sim.control.setLatency('ListContainers', undefined);
    shared.records.recoverAfterWriterCrash();
    const listed = await pollUntil('a task on a replacement worker', () => runner.run({ type: 'gcList' }).catch(() => undefined), {
      timeoutMs: 30_000,
    });
    expect(listed.sandboxes.length).toBeGreaterThanOrEqual(1);
    expect(runner.workers().length).toBeGreaterThanOrEqual(1);
  });

  it.runIf(mode === 'generic')('the PLEG survives a worker crash during its relist and recovers on the next one', async () => {
    await pleg.relist();
    drain();
    const t0 = pleg.lastRelistTime();
    sim.control.setLatency('ListPodSandbox', { kind: 'fixed', ms: 60_000 });
    const before = sim.control.stats().calls.ListPodSandbox ?? 0;
    const relisting = pleg.relist();
    await pollUntil('the relist to reach the runtime', () => (sim.control.stats().calls.ListPodSandbox ?? 0) > before);
    await Promise.all(runner.workers().map((w) => w.terminate()));
    await relisting;
    expect(pleg.lastRelistTime()).toBe(t0);
    sim.control.setLatency('ListPodSandbox', undefined);
    const pod = await runRawPod(cri, { uid: 'pleg-uid-2', name: 'p2', containers: [{ name: 'app', command: ['sleep', 'infinity'] }] });
    await pollUntil(
      'a successful relist',
      async () => {
        await pleg.relist();
        return pleg.lastRelistTime() !== t0;
      },
      { timeoutMs: 30_000 },
    );
    const events = drain().filter((e) => e.id === 'pleg-uid-2');
    expect(events.map((e) => e.data).sort()).toEqual([pod.sandboxId, pod.containerIds[0]].sort());
  });
});

/** A sim runtime and a one-thread pool for a describe block: started before its tests, removed after them. */
function simPool(prefix: string): { sim: SimRuntimeHandle; shared: SharedState; runner: PoolRunner } {
  const env = {} as { dir: string; sim: SimRuntimeHandle; shared: SharedState; runner: PoolRunner };
  beforeAll(async () => {
    env.dir = mkdtempSync(join(tmpdir(), prefix));
    env.sim = await startSimRuntime({ listen: `unix://${join(env.dir, 'cri.sock')}` });
    env.shared = createSharedState({ maxPods: 8 });
    env.runner = new PoolRunner(env.shared.workerInit(env.sim.endpoint, { timeoutMs: 30_000 }), { threads: 1 });
  });
  afterAll(async () => {
    await env.runner?.close();
    await env.sim?.close();
    rmSync(env.dir, { recursive: true, force: true });
  });
  return env;
}

describe('evented PLEG fallback against kubelet-ts-sim', () => {
  const env = simPool('kts-pleg-fb-');

  async function startEvented(relistPeriodMs: number) {
    const { logger, records } = captureLogger();
    const registry = new Registry();
    const metrics = plegMetrics(registry);
    const events = new BoundedQueue<PlegEvent>(1000);
    const sink = (e: PlegEvent) => events.offer(e);
    const generic = new GenericPleg({
      runner: env.runner,
      cache: env.shared.cache,
      records: env.shared.records,
      clock: realClock,
      logger,
      metrics,
      sink,
      relistPeriodMs,
    });
    const source = new WorkerContainerEventSource(env.shared.workerInit(env.sim.endpoint, { timeoutMs: 30_000 }));
    const evented = new EventedPleg({
      generic,
      source,
      eventedMetrics: eventedPlegMetrics(registry),
    });
    const stop = new AbortController();
    evented.start(stop.signal);
    const count = (name: string) => sampleOf(registry, name);
    return { evented, records, count, stop: async () => (stop.abort(), await evented.stopped()) };
  }

  it('falls back at once, with one log line, when the runtime does not implement GetContainerEvents', async () => {
    env.sim.control.setErrorRate('GetContainerEvents', 1, 12, 'unknown method GetContainerEvents for service runtime.v1.RuntimeService');
    const before = env.sim.control.stats().calls.GetContainerEvents ?? 0;
    const p = await startEvented(100);
    try {
      await pollUntil('the fallback', () => !p.evented.eventedInUse);
      // Back on the generic period (100 ms here): relists keep coming.
      const relisted = await p.count('kubelet_pleg_relist_duration_seconds_count');
      await pollUntil(
        'generic relists after the fallback',
        async () => (await p.count('kubelet_pleg_relist_duration_seconds_count')) >= relisted + 3,
      );
      expect((env.sim.control.stats().calls.GetContainerEvents ?? 0) - before).toBe(1);
      const lines = p.records.filter((r) => String(r.msg).includes('Evented PLEG'));
      expect(lines).toHaveLength(1);
      expect(lines[0].msg).toMatch(/does not implement GetContainerEvents.*falling back to the generic PLEG \(relist every 0.1s\)/);
      expect(await p.count('kubelet_evented_pleg_connection_error_count')).toBe(1);
      expect(p.evented.healthy().ok).toBe(true);
    } finally {
      await p.stop();
      env.sim.control.setErrorRate('GetContainerEvents', 0);
    }
  });

  it('retries a failing stream with a forced relist each time and falls back after 5 failures', async () => {
    env.sim.control.setErrorRate('GetContainerEvents', 1, 14, 'stream broken');
    const before = env.sim.control.stats().calls.GetContainerEvents ?? 0;
    const p = await startEvented(60_000);
    try {
      await pollUntil('the fallback', () => !p.evented.eventedInUse);
      expect((env.sim.control.stats().calls.GetContainerEvents ?? 0) - before).toBe(5);
      expect(await p.count('kubelet_evented_pleg_connection_error_count')).toBe(5);
      // The first relist plus one forced per failure but the last (which falls back and relists at once).
      await pollUntil('the relists', async () => (await p.count('kubelet_pleg_relist_duration_seconds_count')) >= 6);
      const lines = p.records.filter((r) => String(r.msg).includes('Evented PLEG'));
      expect(lines.map((r) => r.msg)).toEqual([expect.stringMatching(/stream failed 5 times; last: .*stream broken.*relist every 60s/)]);
    } finally {
      await p.stop();
      env.sim.control.setErrorRate('GetContainerEvents', 0);
    }
  });
});

describe('generic PLEG relist loop on the pool against kubelet-ts-sim', () => {
  const env = simPool('kts-pleg-loop-');

  it('relists on its worker’s timer with no task per steady relist, and keeps relisting after that worker dies', async () => {
    const { logger, records } = captureLogger();
    const registry = new Registry();
    const events = new BoundedQueue<PlegEvent>(1000);
    const pleg = new GenericPleg({
      runner: env.runner,
      cache: env.shared.cache,
      records: env.shared.records,
      clock: realClock,
      logger,
      metrics: plegMetrics(registry),
      sink: (e) => events.offer(e),
      relistPeriodMs: 50,
    });
    const relists = () => sampleOf(registry, 'kubelet_pleg_relist_duration_seconds_count');
    const stop = new AbortController();
    const run = vi.spyOn(env.runner, 'run');
    try {
      pleg.start(stop.signal);
      await pollUntil('steady relists', async () => (await relists()) >= 5);
      expect(run).not.toHaveBeenCalled(); // an empty runtime: every relist is quiet and ends in the worker
      const before = await relists();
      const lastSeen = pleg.lastRelistTime();
      await Promise.all(env.runner.workers().map((w) => w.terminate()));
      await pollUntil(
        'relists on a replacement worker',
        async () => (await relists()) >= before + 5 && pleg.lastRelistTime() !== lastSeen,
        {
          timeoutMs: 60_000,
        },
      );
      expect(records.some((r) => String(r.msg).includes('GenericPLEG: Unable to retrieve pods'))).toBe(true);
      expect(pleg.healthy().ok).toBe(true);
    } finally {
      run.mockRestore();
      stop.abort();
      await pleg.stopped();
    }
  });
});
