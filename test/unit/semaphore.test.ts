import { describe, expect, it } from 'vitest';
import { Semaphore } from '../../src/common/semaphore.js';

describe('Semaphore', () => {
  it('never exceeds its limit and serves waiters in order', async () => {
    const sem = new Semaphore(2);
    let inFlight = 0;
    let max = 0;
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const tasks = [0, 1, 2, 3, 4].map((i) =>
      sem.run(async () => {
        inFlight++;
        max = Math.max(max, inFlight);
        order.push(i);
        await new Promise<void>((r) => releases.push(r));
        inFlight--;
      }),
    );
    for (let done = 0; done < 5; done++) {
      while (releases.length === 0) await Promise.resolve();
      expect(inFlight).toBeLessThanOrEqual(2);
      releases.shift()!();
      await Promise.resolve();
    }
    await Promise.all(tasks);
    expect(max).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(sem.inUse).toBe(0);
  });

  it('releases its slot when the function throws', async () => {
    const sem = new Semaphore(1);
    await expect(
      sem.run(async () => {
        throw new Error('x');
      }),
    ).rejects.toThrow('x');
    expect(await sem.run(async () => 7)).toBe(7);
  });
});
