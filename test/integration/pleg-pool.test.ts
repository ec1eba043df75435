/**
 * The generic PLEG on a real piscina pool against the simulated runtime:
 * events for create/start/die/remove with full ids, the SAB cache filled by
 * workers, and a worker killed mid-task being replaced.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { WorkerCrashedError } from '../../src/common/errors.js';
import { CriClient } from '../../src/cri/client.js';
import { realClock } from '../../src/common/clock.js';
import { GenericPleg } from '../../src/main/pleg/generic-pleg.js';
import { plegMetrics } from '../../src/main/pleg/pleg-metrics.js';
import type { PlegEvent } from '../../src/runtime/pleg-event.js';
import { runRawPod } from '../../src/sim/populate.js';
import { startSimRuntime, type SimRuntimeHandle } from '../../src/sim/server.js';
import { createSharedState, type SharedState } from '../../src/workers/shared-state.js';
import { PoolRunner } from '../../src/workers/task-runner.js';
import { pollUntil } from '../helpers/poll.js';

describe('GenericPleg on the worker pool against kubelet-ts-sim', () => {
  let dir: string;
  let sim: SimRuntimeHandle;
  let cri: CriClient;
  let shared: SharedState;
  let runner: PoolRunner;
  let pleg: GenericPleg;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-pleg-'));
    sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
    cri = new CriClient({ runtimeEndpoint: sim.endpoint });
    shared = createSharedState({ maxPods: 32 });
    runner = new PoolRunner(shared.workerInit(sim.endpoint, { timeoutMs: 30_000 }), { threads: 2 });
    pleg = new GenericPleg({
      runner,
      cache: shared.cache,
      records: shared.records,
      clock: realClock,
      logger: silentLogger(),
      metrics: plegMetrics(new Registry()),
    });
  });

  afterAll(async () => {
    await runner?.close();
    cri?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const drain = (): PlegEvent[] => pleg.events.drain();

  it('runs tasks on the pool’s worker threads, not the main thread', async () => {
    const threads = await pollUntil('two live workers', () => runner.workers().length === 2 && runner.workers().map((w) => w.threadId));
    expect(new Set(threads).size).toBe(2);
    const { threadId } = await runner.run({ type: 'ping' });
    expect(threads).toContain(threadId);
    expect(threadId).not.toBe(0);
  });

  it('reports start, death and removal with full ids, and caches the status with the pod IP', async () => {
    await pleg.relist();
    drain();
    const pod = await runRawPod(cri, { uid: 'pleg-uid-1', name: 'p1', containers: [{ name: 'app', command: ['sleep', 'infinity'] }] });
    await pleg.relist();
    const started = drain();
    expect(started.map((e) => `${e.type}:${e.data}`).sort()).toEqual(
      [`ContainerStarted:${pod.sandboxId}`, `ContainerStarted:${pod.containerIds[0]}`].sort(),
    );
    const slot = shared.cache.slotOf('pleg-uid-1')!;
    const status = shared.cache.read(slot, 'pleg-uid-1')!;
    expect(status.name).toBe('p1');
    expect(status.sandboxStatuses[0].ips[0]).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(status.containerStatuses[0]).toMatchObject({ id: pod.containerIds[0], name: 'app', state: 'running' });

    sim.control.killContainer(pod.containerIds[0], 1);
    await pleg.relist();
    expect(drain()).toEqual([{ id: 'pleg-uid-1', type: 'ContainerDied', data: pod.containerIds[0] }]);
    expect(shared.cache.read(slot, 'pleg-uid-1')!.containerStatuses[0]).toMatchObject({ state: 'exited', exitCode: 1 });

    await cri.removeContainer({ containerId: pod.containerIds[0] });
    await pleg.relist();
    expect(drain().map((e) => e.type)).toEqual(['ContainerRemoved']);
  });

  it('replaces a worker killed mid-task; the task fails with WorkerCrashedError and the next one succeeds', async () => {
    sim.control.setLatency('ListContainers', { kind: 'fixed', ms: 60_000 });
    const before = sim.control.stats().calls.ListContainers ?? 0;
    const inFlight = runner.run({ type: 'relist' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await pollUntil('the relist to reach the runtime', () => (sim.control.stats().calls.ListContainers ?? 0) > before);
    await Promise.all(runner.workers().map((w) => w.terminate()));
    const err = await inFlight;
    expect(err).toBeInstanceOf(WorkerCrashedError);
    expect((err as Error).message).toMatch(/worker thread failed while running task "relist"/);
    sim.control.setLatency('ListContainers', undefined);
    shared.records.recoverAfterWriterCrash();
    const summary = await pollUntil('a relist on a replacement worker', () => runner.run({ type: 'relist' }).catch(() => undefined), {
      timeoutMs: 30_000,
    });
    expect(summary.podCount).toBeGreaterThanOrEqual(1);
    expect(runner.workers().length).toBeGreaterThanOrEqual(1);
  });

  it('the PLEG survives a worker crash during its relist and recovers on the next one', async () => {
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
