import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EventedPleg, EVENTED_RELIST_PERIOD_MS, GLOBAL_CACHE_UPDATE_PERIOD_MS } from '../../src/main/pleg/evented-pleg.js';
import { GenericPleg } from '../../src/main/pleg/generic-pleg.js';
import { BoundedQueue } from '../../src/main/pleg/bounded-queue.js';
import { eventedPlegMetrics, plegMetrics } from '../../src/main/pleg/pleg-metrics.js';
import type { PlegEvent } from '../../src/runtime/pleg-event.js';
import type { PodStatus } from '../../src/runtime/types.js';
import { createSharedState } from '../../src/shared/shared-state.js';
import { InlineRunner } from '../../src/workers/task-runner.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeContainerEventSource } from '../fakes/fake-container-event-source.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { captureLogger } from '../helpers/capture-logger.js';

const flush = () => new Promise((r) => setImmediate(r));

function status(uid: string, timestamp: number): PodStatus {
  return { uid, name: uid, namespace: 'ns', ips: [], sandboxStatuses: [], containerStatuses: [], timestamp };
}

function setup(channelCapacity = 1000) {
  const clock = new FakeClock();
  const runtime = new FakeRuntime();
  const shared = createSharedState({ maxPods: 8 });
  const registry = new Registry();
  const metrics = plegMetrics(registry);
  const { logger, records } = captureLogger();
  const events = new BoundedQueue<PlegEvent>(channelCapacity);
  const sink = (e: PlegEvent) => events.offer(e);
  const generic = new GenericPleg({
    runner: new InlineRunner(shared.workerInit('unix:///unused.sock'), runtime, clock),
    cache: shared.cache,
    records: shared.records,
    clock,
    logger,
    metrics,
    sink,
  });
  const source = new FakeContainerEventSource();
  const pleg = new EventedPleg({
    generic,
    source,
    eventedMetrics: eventedPlegMetrics(registry),
  });
  const stop = new AbortController();
  const warnings = () => records.filter((r) => String(r.msg).startsWith('Evented PLEG is not usable'));
  return { clock, runtime, shared, registry, events, source, pleg, stop, warnings, relists: () => runtime.calls.getPods };
}

describe('EventedPleg', () => {
  it('relists once at start, then only every 300 s while the stream is open', async () => {
    const t = setup();
    t.pleg.start(t.stop.signal);
    await flush();
    expect(t.relists()).toBe(1);
    t.clock.step(EVENTED_RELIST_PERIOD_MS - 1);
    await flush();
    expect(t.relists()).toBe(1);
    t.clock.step(1);
    await flush();
    expect(t.relists()).toBe(2);
    expect(t.source.open).toBe(true);
    t.stop.abort();
    await t.pleg.stopped();
    expect(t.source.closed).toBe(true);
  });

  it('caches statuses of pods without a slot before delivering events, and counts a full channel', async () => {
    const t = setup(1);
    t.pleg.start(t.stop.signal);
    await flush();
    t.source.push({
      unslotted: [status('u1', 5)],
      events: [
        { id: 'u1', type: 'ContainerStarted', data: 'c1' },
        { id: 'u1', type: 'ContainerStarted', data: 'c2' },
      ],
    });
    const slot = t.shared.cache.slotOf('u1')!;
    expect(t.shared.cache.read(slot, 'u1')?.timestamp).toBe(5);
    expect(t.events.drain()).toEqual([{ id: 'u1', type: 'ContainerStarted', data: 'c1' }]);
    expect(await t.registry.metrics()).toMatch(/^kubelet_pleg_discard_events 1$/m);
    expect(t.pleg.healthy()).toEqual({ ok: false, message: 'EventedPLEG: pleg event channel capacity is full' });
    t.source.push({ events: [{ id: 'u1', type: 'ContainerDied', data: 'c1' }] });
    expect(t.pleg.healthy().ok).toBe(true);
    t.stop.abort();
    await t.pleg.stopped();
  });

  it('moves the cache global timestamp to now every 2 s', async () => {
    const t = setup();
    t.pleg.start(t.stop.signal);
    await flush();
    const first = t.shared.cache.getGlobalTimestamp();
    t.clock.step(GLOBAL_CACHE_UPDATE_PERIOD_MS);
    await flush();
    expect(t.shared.cache.getGlobalTimestamp()).toBe(first + GLOBAL_CACHE_UPDATE_PERIOD_MS);
    t.stop.abort();
    await t.pleg.stopped();
  });

  it('falls back at once on Unimplemented, with one warning, to the 1 s relist', async () => {
    const t = setup();
    t.source.script = [
      { cancelled: false, received: 0, error: { name: 'CriError', code: 'KTS_ERR_CRI', message: 'unknown service', grpcCode: 12 } },
    ];
    t.pleg.start(t.stop.signal);
    await flush();
    await flush();
    expect(t.pleg.eventedInUse).toBe(false);
    expect(t.warnings()).toHaveLength(1);
    expect(t.warnings()[0].msg).toMatch(/does not implement GetContainerEvents.*relist every 1s/);
    const before = t.relists();
    t.clock.step(1000);
    await flush();
    expect(t.relists()).toBe(before + 1);
    expect(t.source.watches).toBe(1);
    t.stop.abort();
    await t.pleg.stopped();
  });

  it('forces a relist after each stream failure and falls back after the 5th', async () => {
    const t = setup();
    const fail = { cancelled: false, received: 0, error: { name: 'CriError', code: 'KTS_ERR_CRI', message: 'broken', grpcCode: 14 } };
    t.source.script = [fail, fail, fail, fail, fail];
    t.pleg.start(t.stop.signal);
    for (let i = 0; i < 20 && t.pleg.eventedInUse; i++) await flush();
    expect(t.pleg.eventedInUse).toBe(false);
    expect(t.source.watches).toBe(5);
    expect(await t.registry.metrics()).toMatch(/^kubelet_evented_pleg_connection_error_count 5$/m);
    // 1 at start + 4 forced + 1 when the period changes back
    await flush();
    expect(t.relists()).toBe(6);
    expect(t.warnings().map((r) => r.msg)).toEqual([expect.stringMatching(/failed 5 times; last: broken/)]);
    t.stop.abort();
    await t.pleg.stopped();
  });
});
