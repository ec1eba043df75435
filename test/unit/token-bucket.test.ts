import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/common/token-bucket.js';
import { FakeClock } from '../fakes/fake-clock.js';

/** Lets every pending promise continuation run (no timers involved). */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** Tracks a promise's outcome without awaiting it. */
function track(p: Promise<void>, clock: FakeClock) {
  const s: { state: 'pending' | 'resolved' | 'rejected'; at?: number; reason?: unknown } = { state: 'pending' };
  p.then(
    () => Object.assign(s, { state: 'resolved', at: clock.now() }),
    (reason: unknown) => Object.assign(s, { state: 'rejected', at: clock.now(), reason }),
  );
  return s;
}

describe('TokenBucket (client-go flowcontrol semantics)', () => {
  it.each([
    // qps, burst, [step before the probe (ms), tryTake results expected]
    {
      qps: 2,
      burst: 3,
      probes: [
        [0, [true, true, true, false]],
        [499, [false]],
        [1, [true, false]],
        [10_000, [true, true, true, false]],
      ],
    },
    {
      qps: 10,
      burst: 1,
      probes: [
        [0, [true, false]],
        [99, [false]],
        [1, [true, false]],
        [250, [true, false]],
      ],
    },
    {
      qps: 0.5,
      burst: 2,
      probes: [
        [0, [true, true, false]],
        [1999, [false]],
        [1, [true, false]],
      ],
    },
  ] as const)('tryTake: starts with a full burst of $burst, then refills at $qps/s, capped at burst', ({ qps, burst, probes }) => {
    const clock = new FakeClock();
    const b = new TokenBucket(qps, burst, clock);
    for (const [step, expected] of probes) {
      clock.step(step);
      expect(expected.map(() => b.tryTake())).toEqual(expected);
    }
  });

  it('take: waiters are served first in, first out, one per 1/qps after the burst', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const b = new TokenBucket(1, 1, clock);
    const order: string[] = [];
    const waiters = ['a', 'b', 'c', 'd'].map((name) =>
      track(
        b.take().then(() => void order.push(name)),
        clock,
      ),
    );
    for (let i = 0; i < 4; i++) {
      await settle();
      clock.step(1000);
    }
    await settle();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(waiters.map((w) => w.at! - start)).toEqual([0, 1000, 2000, 3000]);
  });

  it('an aborted waiter rejects with the signal reason and does not stall the ones behind it', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const b = new TokenBucket(1, 1, clock);
    await b.take();
    const ac = new AbortController();
    const aborted = track(b.take(ac.signal), clock);
    const next = track(b.take(), clock);
    await settle();
    ac.abort(new Error('shutting down'));
    await settle();
    expect(aborted.state).toBe('rejected');
    expect((aborted.reason as Error).message).toBe('shutting down');
    clock.step(1000);
    await settle();
    expect(next).toMatchObject({ state: 'resolved', at: start + 1000 });
  });

  // Upstream rate.Limiter.Wait returns ctx.Err() for a cancelled context and
  // cancels its reservation, so a cancelled waiter never consumes a token.
  it.each([
    { name: 'aborted before take() is called', abortBeforeTake: true },
    { name: 'aborted while queued, with a token free when its turn comes', abortBeforeTake: false },
  ])('a waiter $name rejects and leaves the token to the next one', async ({ abortBeforeTake }) => {
    const clock = new FakeClock();
    const start = clock.now();
    const b = new TokenBucket(1, 2, clock);
    await b.take();
    await b.take();
    const first = track(b.take(), clock);
    const ac = new AbortController();
    if (abortBeforeTake) ac.abort(new Error('cancelled'));
    const cancelled = track(b.take(ac.signal), clock);
    const last = track(b.take(), clock);
    await settle();
    ac.abort(new Error('cancelled'));
    // Two tokens accrue at once: one for `first`, one left for `last`.
    clock.step(2000);
    await settle();
    expect(first.state).toBe('resolved');
    expect(cancelled.state).toBe('rejected');
    expect(last).toMatchObject({ state: 'resolved', at: start + 2000 });
  });

  it.each([0, -1])('qps %d means unlimited: take never waits and tryTake always succeeds', async (qps) => {
    const clock = new FakeClock();
    const b = new TokenBucket(qps, 0, clock);
    expect(b.unlimited).toBe(true);
    const all = Array.from({ length: 1000 }, () => track(b.take(), clock));
    await settle();
    expect(all.every((s) => s.state === 'resolved')).toBe(true);
    expect(Array.from({ length: 1000 }, () => b.tryTake()).every(Boolean)).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it.each([0, 0.5, Number.NaN])('rejects burst %d when qps > 0', (burst) => {
    expect(() => new TokenBucket(5, burst, new FakeClock())).toThrow(RangeError);
  });
});
