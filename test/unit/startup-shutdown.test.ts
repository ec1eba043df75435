import { describe, expect, it } from 'vitest';
import { Late } from '../../src/common/late.js';
import { Shutdown } from '../../src/main/startup/shutdown.js';

describe('Shutdown', () => {
  it('takes the steps newest first, each awaited before the next', async () => {
    const order: string[] = [];
    const s = new Shutdown();
    s.add('a', () => void order.push('a'));
    s.add('b', async () => {
      await new Promise((r) => setImmediate(r));
      order.push('b');
    });
    s.add('c', () => void order.push('c'));
    await s.run();
    expect(order).toEqual(['c', 'b', 'a']);
  });

  it('runs every step once; a failing step does not stop the rest and run() rejects with the first failure', async () => {
    const order: string[] = [];
    const s = new Shutdown();
    s.add('a', () => void order.push('a'));
    s.add('b', () => {
      throw new Error('b failed');
    });
    s.add('c', () => Promise.reject(new Error('c failed')));
    const first = s.run();
    const second = s.run();
    await expect(first).rejects.toThrow('c failed');
    await expect(second).rejects.toThrow('c failed');
    expect(order).toEqual(['a']);
  });
});

describe('Late', () => {
  it('gives the value once set, and names what was read too early', () => {
    const ref = new Late<number>('the answer');
    expect(() => ref.get()).toThrow('the answer was used before it was built');
    expect(ref.set(42)).toBe(42);
    expect(ref.get()).toBe(42);
  });
});
