import { describe, expect, it } from 'vitest';
import { sleepOrWake, Wakeup } from '../../src/common/wakeup.js';
import { FakeClock } from '../fakes/fake-clock.js';

const settle = () => new Promise((r) => setImmediate(r));

describe('Wakeup', () => {
  it('fire() calls every current subscriber once, an unsubscribed one not at all, and a later subscriber only at the next fire()', () => {
    const w = new Wakeup();
    const calls: string[] = [];
    w.subscribe(() => calls.push('a'));
    const unsubscribeB = w.subscribe(() => calls.push('b'));
    unsubscribeB();
    w.fire();
    expect(calls).toEqual(['a']);
    w.fire();
    expect(calls).toEqual(['a']);
    w.subscribe(() => calls.push('c'));
    w.fire();
    expect(calls).toEqual(['a', 'c']);
  });

  it('sleepOrWake ends at the abort and leaves no subscription or timer behind', async () => {
    const clock = new FakeClock();
    const w = new Wakeup();
    let active = 0;
    const counted = {
      subscribe(wake: () => void) {
        active++;
        const unsubscribe = w.subscribe(wake);
        return () => {
          active--;
          unsubscribe();
        };
      },
    };
    const ac = new AbortController();
    let done = false;
    const p = sleepOrWake(clock, 1000, counted, ac.signal).then(() => (done = true));
    expect([active, clock.pendingTimers()]).toEqual([1, 1]);
    ac.abort();
    await settle();
    expect(done).toBe(true);
    expect([active, clock.pendingTimers()]).toEqual([0, 0]);
    await p;
  });

  it('sleepOrWake ends at the wake-up without the clock moving, or at the end of the sleep', async () => {
    const clock = new FakeClock();
    const w = new Wakeup();
    let done = false;
    const first = sleepOrWake(clock, 1000, w, new AbortController().signal).then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    w.fire();
    await settle();
    expect(done).toBe(true);
    done = false;
    const second = sleepOrWake(clock, 1000, w, new AbortController().signal).then(() => (done = true));
    await settle();
    clock.step(999);
    await settle();
    expect(done).toBe(false);
    clock.step(1);
    await settle();
    expect(done).toBe(true);
    await Promise.all([first, second]);
  });
});
