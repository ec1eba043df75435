import { describe, expect, it } from 'vitest';
import { sleepOrWake, Wakeup } from '../../src/common/wakeup.js';
import { FakeClock } from '../fakes/fake-clock.js';

const settle = () => new Promise((r) => setImmediate(r));

describe('Wakeup', () => {
  it('fire() resolves every pending next(), an abort resolves its own, and a later next() waits for the next fire()', async () => {
    const w = new Wakeup();
    const order: string[] = [];
    const ac = new AbortController();
    const a = w.next(new AbortController().signal).then(() => order.push('a'));
    const b = w.next(ac.signal).then(() => order.push('b'));
    ac.abort();
    await settle();
    expect(order).toEqual(['b']);
    w.fire();
    await settle();
    expect(order).toEqual(['b', 'a']);
    const c = w.next(new AbortController().signal).then(() => order.push('c'));
    await settle();
    expect(order).toEqual(['b', 'a']);
    w.fire();
    await settle();
    expect(order).toEqual(['b', 'a', 'c']);
    await Promise.all([a, b, c]);
  });

  it('sleepOrWake ends at the wake-up without the clock moving, or at the end of the sleep', async () => {
    const clock = new FakeClock();
    const w = new Wakeup();
    let done = false;
    const first = sleepOrWake(clock, 1000, (s) => w.next(s), new AbortController().signal).then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    w.fire();
    await settle();
    expect(done).toBe(true);
    done = false;
    const second = sleepOrWake(clock, 1000, (s) => w.next(s), new AbortController().signal).then(() => (done = true));
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
