import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Nudge, runPeriodically } from '../../src/common/periodic.js';
import { FakeClock } from '../fakes/fake-clock.js';

const flush = () => new Promise((r) => setImmediate(r));

describe('runPeriodically (upstream wait.JitterUntil)', () => {
  it('retains one timer and one abort listener whatever the number of runs (100,000 ticks)', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    let runs = 0;
    const done = runPeriodically(() => runs++, { periodMs: 1000, signal: ac.signal, clock, onError: () => undefined });
    for (let i = 0; i < 100_000; i++) {
      clock.step(1000);
      if (i % 10_000 === 0) {
        expect(clock.pendingTimers()).toBe(1);
        expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
      }
    }
    expect(runs).toBe(100_000);
    expect(clock.pendingTimers()).toBe(1);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('sliding: the period counts from the end of an async run; runs never overlap', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const starts: number[] = [];
    let release: (() => void) | undefined;
    const done = runPeriodically(
      () => {
        starts.push(clock.now());
        return new Promise<void>((r) => (release = r));
      },
      { periodMs: 1000, signal: ac.signal, clock, onError: () => undefined, immediate: true },
    );
    const t0 = starts[0];
    clock.step(5000); // the first run is still going: no second one
    expect(starts).toHaveLength(1);
    release!();
    await flush();
    clock.step(999);
    expect(starts).toHaveLength(1);
    clock.step(1);
    expect(starts).toEqual([t0, t0 + 6000]);
    ac.abort();
    release!();
    await done;
  });

  it('not sliding: the period counts from the start of a run; a long run delays the next, without overlap', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const starts: number[] = [];
    const done = runPeriodically(
      () => {
        starts.push(clock.now());
        clock.step(starts.length === 2 ? 1500 : 300); // the run's own duration
      },
      { periodMs: 1000, sliding: false, signal: ac.signal, clock, onError: () => undefined, immediate: true },
    );
    clock.step(3000);
    const t0 = starts[0];
    expect(starts.slice(0, 3)).toEqual([t0, t0 + 1000, t0 + 2500]);
    ac.abort();
    await done;
  });

  it('a failing run goes to onError and the loop goes on; jitter stretches the period; abort ends it', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const errors: unknown[] = [];
    let runs = 0;
    const done = runPeriodically(
      () => {
        runs++;
        if (runs === 1) throw new Error('sync');
        if (runs === 2) return Promise.reject(new Error('async'));
      },
      { periodMs: 1000, jitterFactor: 0.5, random: () => 1, signal: ac.signal, clock, onError: (e) => errors.push(e) },
    );
    clock.step(1499);
    expect(runs).toBe(0);
    clock.step(1);
    expect(runs).toBe(1);
    clock.step(1500);
    await flush();
    clock.step(1500);
    expect(runs).toBe(3);
    expect(errors.map((e) => (e as Error).message)).toEqual(['sync', 'async']);
    ac.abort();
    await done;
    clock.step(10_000);
    expect(runs).toBe(3);
  });
  it('a nudge ends the wait; one fired during a run starts the next run when it ends; a period function is read per wait', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const nudge = new Nudge();
    let period = 1000;
    const starts: number[] = [];
    let release: (() => void) | undefined;
    const done = runPeriodically(
      () => {
        starts.push(clock.now());
        return new Promise<void>((r) => (release = r));
      },
      { periodMs: () => period, signal: ac.signal, clock, onError: () => undefined, immediate: true, nudge },
    );
    const t0 = starts[0];
    release!();
    await flush();
    clock.step(100);
    nudge.fire(); // waiting: runs at once
    expect(starts).toEqual([t0, t0 + 100]);
    nudge.fire(); // running: the next run follows this one
    nudge.fire();
    period = 5000;
    release!();
    await flush();
    clock.step(0);
    expect(starts).toEqual([t0, t0 + 100, t0 + 100]);
    release!();
    await flush();
    clock.step(4999); // then the new period
    expect(starts).toHaveLength(3);
    clock.step(1);
    expect(starts).toHaveLength(4);
    ac.abort();
    release!();
    await done;
    nudge.fire(); // a stopped loop no longer listens
    expect(starts).toHaveLength(4);
    expect(clock.pendingTimers()).toBe(0);
  });
  it('firstDelayMs sets the first wait, then the period follows', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const starts: number[] = [];
    const t0 = clock.now();
    const done = runPeriodically(() => void starts.push(clock.now() - t0), {
      periodMs: 5000,
      firstDelayMs: 1000,
      signal: ac.signal,
      clock,
      onError: () => undefined,
    });
    clock.step(999);
    expect(starts).toEqual([]);
    clock.step(1);
    clock.step(5000);
    expect(starts).toEqual([1000, 6000]);
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
  });
});
