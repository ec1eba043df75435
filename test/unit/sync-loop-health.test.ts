import { createServer } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { PodHandlers } from '../../src/main/kubelet/handlers.js';
import type { PodManager } from '../../src/main/podconfig/pod-manager.js';
import { RuntimeState } from '../../src/main/kubelet/runtime-state.js';
import { LogHealth } from '../../src/main/http/log-health.js';
import { startHealthzServer, type HealthCheck } from '../../src/main/http/server.js';
import type { PodWorkers } from '../../src/main/pod-workers/pod-workers.js';
import type { PodConfig } from '../../src/main/podconfig/pod-config.js';
import type { StatusManager } from '../../src/main/status/status-manager.js';
import { STARTUP_WAIT_MS, SyncLoop } from '../../src/main/kubelet/sync-loop.js';
import { SyncLoopQueue, type SyncLoopEvent } from '../../src/main/sync-loop/sync-loop-queue.js';
import type { PlegEvent } from '../../src/runtime/pleg-event.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { Wakeup } from '../../src/common/wakeup.js';

const plegEvent = (i: number): PlegEvent => ({ id: `pod-${i}`, type: 'ContainerStarted', data: `c-${i}` });

describe('syncLoop channel choice (Go select: random among ready channels)', () => {
  it('a sustained PLEG stream does not starve the sync tick or housekeeping', async () => {
    let seed = 1;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const q = new SyncLoopQueue(1000, random);
    const signal = new AbortController().signal;
    for (let i = 0; i < 1000; i++) q.offerPleg(plegEvent(i));
    q.tick('sync');
    q.tick('housekeeping');
    const kinds: SyncLoopEvent['kind'][] = [];
    for (let i = 0; i < 30; i++) {
      const e = (await q.take(signal))!;
      kinds.push(e.kind);
      if (e.kind === 'pleg') q.offerPleg(plegEvent(1000 + i)); // the stream keeps coming
    }
    expect(kinds).toContain('sync');
    expect(kinds).toContain('housekeeping');
  });

  it('keeps order within a kind', async () => {
    const q = new SyncLoopQueue(1000, () => 0);
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) q.offerPleg(plegEvent(i));
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(((await q.take(signal)) as { event: PlegEvent }).event.id);
    expect(ids).toEqual(['pod-0', 'pod-1', 'pod-2']);
  });
});

describe('syncLoop health (upstream syncLoopHealthCheck)', () => {
  function loop(
    clock: FakeClock,
    runtimeDown: { value: boolean },
    syncFrequencyMs = 60_000,
    runtimeState: Pick<RuntimeState, 'runtimeErrors' | 'changes'> = {
      runtimeErrors: () => (runtimeDown.value ? ['container runtime is down'] : []),
      changes: new Wakeup(),
    },
    syncs = { count: 0 },
    logger = pino({ level: 'silent' }),
  ) {
    const queue = new SyncLoopQueue();
    const sl = new SyncLoop({
      podConfig: { updates: { iterate: async function* () {} }, seenAllSources: () => true } as unknown as PodConfig,
      handlers: { handlePodSyncs: () => syncs.count++, podsToSync: () => [], handlePodCleanups: () => {} } as unknown as PodHandlers,
      podWorkers: { dueForResync: () => [] } as unknown as PodWorkers,
      podManager: { pods: () => [] } as unknown as PodManager,
      statusManager: {} as StatusManager,
      runtimeState: runtimeState as RuntimeState,
      clock,
      logger,
      queue,
      syncFrequencyMs,
    });
    return { sl, queue };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it('skips while the PLEG has not relisted yet, and runs as soon as the first relist lands, not at the end of the backoff', async () => {
    const clock = new FakeClock();
    const pleg = { ok: false };
    const ready = { type: 'RuntimeReady', status: true, reason: '', message: '' };
    const network = { ...ready, type: 'NetworkReady' };
    const state = new RuntimeState(
      { status: () => Promise.resolve({ status: { conditions: [ready, network] }, info: {} }) } as never,
      { healthy: () => ({ ok: pleg.ok, message: pleg.ok ? 'ok' : 'pleg has yet to be successful' }) },
      clock,
      pino({ level: 'silent' }),
    );
    await state.update();
    const syncs = { count: 0 };
    const ac = new AbortController();
    const { sl, queue } = loop(clock, { value: false }, 60_000, state, syncs);
    sl.start(ac.signal);
    queue.tick('sync');
    await settle();
    expect(syncs.count).toBe(0); // skipped: "PLEG is not healthy: pleg has yet to be successful"
    pleg.ok = true;
    await settle();
    expect(syncs.count).toBe(0); // nothing said the state changed: still in the 100 ms backoff
    state.changed(); // what the PLEG's onRelist does
    await settle();
    await settle();
    expect(syncs.count).toBe(1); // the fake clock never moved
    ac.abort();
    await sl.stopped();
  });

  /** A RuntimeState whose PLEG has not relisted yet, and a logger whose records the test reads. */
  async function starting(clock: FakeClock) {
    const pleg = { ok: false };
    const ready = { type: 'RuntimeReady', status: true, reason: '', message: '' };
    const state = new RuntimeState(
      { status: () => Promise.resolve({ status: { conditions: [ready, { ...ready, type: 'NetworkReady' }] }, info: {} }) } as never,
      { healthy: () => ({ ok: pleg.ok, message: pleg.ok ? 'ok' : 'pleg has yet to be successful' }) },
      clock,
      pino({ level: 'silent' }),
    );
    await state.update();
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as { level: number; msg: string }) });
    return { pleg, state, lines, logger };
  }

  it('start-up: waits for the first relist instead of logging "Skipping pod synchronization" (a healthy start logs no error)', async () => {
    const clock = new FakeClock();
    const { pleg, state, lines, logger } = await starting(clock);
    const syncs = { count: 0 };
    const ac = new AbortController();
    const { sl, queue } = loop(clock, { value: false }, 60_000, state, syncs, logger);
    sl.start(ac.signal);
    queue.tick('sync');
    clock.step(500);
    await settle();
    expect(syncs.count).toBe(0);
    pleg.ok = true;
    state.changed(); // the first relist
    await settle();
    await settle();
    expect(syncs.count).toBe(1);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    ac.abort();
    await sl.stopped();
  });

  it('start-up: a PLEG still not healthy after the startup wait is skipped and logged at error level, as upstream', async () => {
    const clock = new FakeClock();
    const { state, lines, logger } = await starting(clock);
    const syncs = { count: 0 };
    const ac = new AbortController();
    const { sl, queue } = loop(clock, { value: false }, 60_000, state, syncs, logger);
    sl.start(ac.signal);
    queue.tick('sync');
    await settle();
    clock.step(STARTUP_WAIT_MS - 1);
    await settle();
    expect(lines).toEqual([]);
    clock.step(1);
    await settle();
    await settle();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([[50, 'Skipping pod synchronization']]);
    expect(syncs.count).toBe(0);
    ac.abort();
    await sl.stopped();
  });

  it('sources are ready (upstream sourcesReady) only once the loop has handled an update of each, not when PodConfig has merged it', async () => {
    const clock = new FakeClock();
    let deliver: (() => void) | undefined;
    const delivered = new Promise<void>((r) => (deliver = r));
    const podConfig = {
      // The file source has delivered its first (empty) SET: PodConfig has seen it.
      seenAllSources: (seen?: Iterable<string>) => seen === undefined || new Set(seen).has('file'),
      updates: {
        iterate: async function* () {
          await delivered;
          yield { op: 'ADD', pods: [], source: 'file' };
        },
      },
    };
    const sl = new SyncLoop({
      podConfig: podConfig as unknown as PodConfig,
      handlers: { handlePodAdditions: () => {}, podsToSync: () => [], handlePodSyncs: () => {} } as unknown as PodHandlers,
      podWorkers: { dueForResync: () => [] } as unknown as PodWorkers,
      podManager: { pods: () => [] } as unknown as PodManager,
      statusManager: {} as StatusManager,
      runtimeState: { runtimeErrors: () => [], changes: new Wakeup() } as unknown as RuntimeState,
      clock,
      logger: pino({ level: 'silent' }),
    });
    const ac = new AbortController();
    sl.start(ac.signal);
    await settle();
    expect(sl.sourcesReady()).toBe(false);
    deliver!();
    await settle();
    await settle();
    expect(sl.sourcesReady()).toBe(true);
    ac.abort();
    await sl.stopped();
  });

  it('its sync and housekeeping ticks keep one timer each over a day of ticks (upstream tickers; runPeriodically retains nothing per tick)', async () => {
    const clock = new FakeClock();
    const syncs = { count: 0 };
    const ac = new AbortController();
    const { sl } = loop(clock, { value: false }, 60_000, undefined, syncs);
    sl.start(ac.signal);
    for (let s = 0; s < 86_400; s += 600) {
      clock.step(600_000); // ten minutes of 1 s and 2 s ticks
      await settle();
      expect(clock.pendingTimers()).toBeLessThanOrEqual(3);
    }
    expect(syncs.count).toBeGreaterThan(100);
    ac.abort();
    await sl.stopped();
  });

  it('a loop that only skips for runtime errors stops being healthy after max(2 × syncFrequency, 5 min)', async () => {
    const clock = new FakeClock();
    const down = { value: false };
    const ac = new AbortController();
    const { sl } = loop(clock, down);
    sl.start(ac.signal);
    await settle();
    clock.step(1000); // one sync tick: an iteration
    await settle();
    expect(sl.healthy().ok).toBe(true);
    down.value = true;
    for (let t = 0; t < 5 * 60; t++) {
      clock.step(1000);
      await settle();
    }
    expect(sl.healthy().ok).toBe(true); // 5 min: exactly at the threshold
    for (let t = 0; t < 3; t++) {
      clock.step(1000);
      await settle();
    }
    expect(sl.healthy()).toEqual({ ok: false, message: 'sync Loop took longer than expected' });
    ac.abort();
    clock.step(10_000);
    await sl.stopped();
  });

  it('the threshold follows syncFrequency when it is longer than 2.5 min', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const { sl } = loop(clock, { value: false }, 10 * 60_000);
    expect(sl.healthy().ok).toBe(true); // never iterated yet: healthy, as upstream's zero time
    sl.start(ac.signal);
    await settle();
    clock.step(1000);
    await settle();
    ac.abort();
    await sl.stopped();
    clock.step(19 * 60_000);
    expect(sl.healthy().ok).toBe(true);
    clock.step(60_000 + 1);
    expect(sl.healthy().ok).toBe(false);
  });
});

describe('/healthz as upstream serves it', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });
  const port = () =>
    new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });

  it('checks ping, log and syncloop; a failure is a 500 that withholds the reason, which is logged', async () => {
    const failures: string[] = [];
    let syncOk = true;
    const checks: HealthCheck[] = [
      { name: 'ping', check: () => ({ ok: true, message: 'ok' }) },
      { name: 'log', check: () => ({ ok: true, message: 'ok' }) },
      {
        name: 'syncloop',
        check: () => (syncOk ? { ok: true, message: 'ok' } : { ok: false, message: 'sync Loop took longer than expected' }),
      },
    ];
    const p = await port();
    const server = await startHealthzServer('127.0.0.1', p, checks, (name, reason) => failures.push(`${name}: ${reason}`));
    close = () => new Promise((r) => server.close(() => r()));
    const get = async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${p}${path}`);
      return [r.status, await r.text()] as const;
    };
    expect(await get('/healthz')).toEqual([200, 'ok']);
    expect(await get('/healthz?verbose')).toEqual([200, '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n']);
    expect(await get('/healthz/log')).toEqual([200, 'ok']);
    syncOk = false;
    expect(await get('/healthz')).toEqual([500, '[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n']);
    expect(await get('/healthz/syncloop')).toEqual([500, 'internal server error: sync Loop took longer than expected\n']);
    expect(failures).toEqual(['syncloop: sync Loop took longer than expected']);
    expect((await get('/healthz/pleg'))[0]).toBe(404);
  });

  it('the log check fails once no flush completed for 2 minutes', () => {
    const clock = new FakeClock();
    let flushes = 0;
    let blocked = false;
    const h = new LogHealth(
      {
        flush: (cb?: (err?: Error) => void) => {
          flushes++;
          if (!blocked) cb?.();
        },
      },
      clock,
    );
    const ac = new AbortController();
    h.start(ac.signal);
    clock.step(0);
    expect(flushes).toBe(1);
    blocked = true;
    clock.step(119_000);
    expect(h.check().ok).toBe(true);
    clock.step(2_000);
    expect(h.check()).toEqual({ ok: false, message: 'logging blocked' });
    ac.abort();
  });
});
