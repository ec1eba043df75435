import { describe, expect, it } from 'vitest';
import { FaultInjector } from '../../src/sim/faults.js';

const items = Array.from({ length: 1000 }, (_, i) => i);

describe('FaultInjector.truncate (truncated lists)', () => {
  it('drops nothing and leaves the list to the caller when no dropFraction is set', () => {
    const f = new FaultInjector(1, { default: { errorRate: 0.5 } });
    expect(f.truncate('ListContainers', () => items)).toBeUndefined();
  });

  it('leaves out about the configured fraction, keeping order, and counts what it dropped', () => {
    const f = new FaultInjector(7, { rpcs: { ListContainers: { dropFraction: 0.2 } } });
    const kept = f.truncate('ListContainers', () => items)!;
    expect(kept.length).toBeGreaterThan(740);
    expect(kept.length).toBeLessThan(860);
    expect([...kept].sort((a, b) => a - b)).toEqual(kept);
    expect(f.dropped.get('ListContainers')).toBe(1000 - kept.length);
    // Only the configured RPC truncates.
    expect(f.truncate('ListPodSandbox', () => items)).toBeUndefined();
  });

  it('repeats the same drops for the same seed and differs for another', () => {
    const run = (seed: number) => new FaultInjector(seed, { default: { dropFraction: 0.3 } }).truncate('ListPodSandbox', () => items);
    expect(run(3)).toEqual(run(3));
    expect(run(3)).not.toEqual(run(4));
  });

  it('takes the fraction from default, overridden by the RPC entry, and rejects one outside [0,1]', () => {
    const f = new FaultInjector(1, { default: { dropFraction: 1 }, rpcs: { ListPodSandbox: { dropFraction: 0 } } });
    expect(f.truncate('ListContainers', () => items)).toEqual([]);
    expect(f.truncate('ListPodSandbox', () => items)).toBeUndefined();
    expect(() => f.set({ default: { dropFraction: 1.5 } })).toThrow();
  });
});
