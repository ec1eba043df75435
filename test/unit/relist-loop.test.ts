import { describe, expect, it } from 'vitest';
import type { RelistAck, RelistReport } from '../../src/workers/protocol/protocol.js';
import { RelistLoop } from '../../src/workers/relist/relist-loop.js';
import { createSharedState } from '../../src/shared/shared-state.js';
import type { RuntimePod } from '../../src/runtime/types.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { CriUnavailableError } from '../../src/common/errors.js';

const flush = () => new Promise((r) => setImmediate(r));
const id = (n: number) => n.toString(16).padStart(64, '0');

function pod(uid: string, state: 'running' | 'exited' = 'running'): RuntimePod {
  return {
    uid,
    name: `pod-${uid}`,
    namespace: 'default',
    sandboxes: [{ id: id(uid.charCodeAt(0)), state: 'ready', createdAt: 1n }],
    containers: [{ id: id(0x100 + uid.charCodeAt(0)), name: 'c', state, hash: 'h', createdAt: 2n, sandboxId: id(uid.charCodeAt(0)) }],
  };
}

function setup(ack: (r: RelistReport) => RelistAck = () => ({ busy: false })) {
  const clock = new FakeClock();
  const runtime = new FakeRuntime();
  const shared = createSharedState({ maxPods: 8 });
  const loop = new RelistLoop({ runtime, records: shared.records, cache: shared.cache, clock });
  const reports: RelistReport[] = [];
  loop
    .attach({
      relisted: async (r) => {
        reports.push(r);
        return ack(r);
      },
    })
    .catch(() => undefined);
  return { clock, runtime, shared, loop, reports };
}

describe('RelistLoop', () => {
  it('reports a relist with news to the handler unfinished, and a relist with nothing new as quiet, with the cache timestamp set', async () => {
    const t = setup();
    t.runtime.pods = [pod('a')];
    await t.loop.relistNow();
    expect(t.reports).toHaveLength(1);
    expect(t.reports[0]).toMatchObject({ quiet: false, timestamp: t.clock.now() });
    expect(t.reports[0].summary?.events.length).toBeGreaterThan(0);
    expect(t.shared.cache.getGlobalTimestamp()).toBeNaN(); // the handler (main thread) sets it after inspection

    t.clock.step(1000);
    await t.loop.relistNow();
    expect(t.reports[1]).toMatchObject({ quiet: true, timestamp: t.clock.now() });
    expect(t.reports[1].summary?.events).toEqual([]);
    expect(t.shared.cache.getGlobalTimestamp()).toBe(t.clock.now());
    expect(t.reports[1].endedAt).toBeGreaterThanOrEqual(t.reports[1].startedAt);
  });

  it('is not quiet while the handler says it holds work (reinspections), even with nothing new', async () => {
    let busy = true;
    const t = setup(() => ({ busy }));
    t.runtime.pods = [pod('a')];
    await t.loop.relistNow();
    t.clock.step(1000);
    await t.loop.relistNow(); // nothing new, but the last ack was busy
    expect(t.reports[1].quiet).toBe(false);
    expect(t.shared.cache.getGlobalTimestamp()).toBeNaN();
    busy = false;
    t.clock.step(1000);
    await t.loop.relistNow(); // the ack of relist 2 said busy: still not quiet
    expect(t.reports[2].quiet).toBe(false);
    t.clock.step(1000);
    await t.loop.relistNow();
    expect(t.reports[3].quiet).toBe(true);
  });

  it('brings the next relist to the handler when a report did not reach it', async () => {
    let fail = false;
    const t = setup(() => {
      if (fail) throw new Error('the main thread is going away');
      return { busy: false };
    });
    t.runtime.pods = [pod('a')];
    await t.loop.relistNow();
    fail = true;
    t.clock.step(1000);
    await t.loop.relistNow(); // quiet, but its report fails
    expect(t.reports[1].quiet).toBe(true);
    fail = false;
    t.clock.step(1000);
    await t.loop.relistNow();
    expect(t.reports[2].quiet).toBe(false);
  });

  it('reports a failed list with its error and no summary, leaving the cache timestamp alone', async () => {
    const t = setup();
    t.runtime.listError = new CriUnavailableError('list_containers: down', 'list_containers', 14);
    await t.loop.relistNow();
    expect(t.reports[0].summary).toBeUndefined();
    expect(t.reports[0].error?.message).toMatch(/down/);
    expect(t.reports[0].quiet).toBe(false);
    expect(t.shared.cache.getGlobalTimestamp()).toBeNaN();
  });

  it('relists at start and then every period after the previous relist was handled; setPeriod relists at once', async () => {
    const t = setup();
    await t.loop.start(1000);
    await flush();
    expect(t.runtime.calls.getPods).toBe(1);
    t.clock.step(999);
    await flush();
    expect(t.runtime.calls.getPods).toBe(1);
    t.clock.step(1);
    await flush();
    expect(t.runtime.calls.getPods).toBe(2);
    await t.loop.setPeriod(300_000);
    await flush();
    expect(t.runtime.calls.getPods).toBe(3);
    t.clock.step(299_999);
    await flush();
    expect(t.runtime.calls.getPods).toBe(3);
    t.clock.step(1);
    await flush();
    expect(t.runtime.calls.getPods).toBe(4);
    await t.loop.stop();
    t.clock.step(600_000);
    await flush();
    expect(t.runtime.calls.getPods).toBe(4);
  });

  it('runs relists one at a time: a relistNow during a relist waits for it and lists again afterwards', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const t = setup();
    const handled: number[] = [];
    await t.loop.attach({
      relisted: async (r) => {
        handled.push(r.timestamp);
        if (handled.length === 1) await gate;
        return { busy: false };
      },
    });
    const first = t.loop.relistNow();
    await flush();
    const second = t.loop.relistNow();
    await flush();
    expect(t.runtime.calls.getPods).toBe(1); // the second waits for the first's handler
    release();
    await Promise.all([first, second]);
    expect(t.runtime.calls.getPods).toBe(2);
    expect(handled).toHaveLength(2);
  });
});
