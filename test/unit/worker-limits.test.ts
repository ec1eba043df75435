import { describe, expect, it } from 'vitest';
import { poolResourceLimits, WORKER_RESOURCE_LIMITS } from '../../src/workers/worker-limits.js';

describe('poolResourceLimits', () => {
  it.each([
    // [maxPods, young generation MiB]
    [0, 3],
    [110, 3],
    [250, 3],
    [251, 6],
    [500, 6],
    [1000, 12],
    [1020, 15],
    [2000, 24],
    [5000, 24],
  ])('maxPods %d gives the pool threads a %d MiB young generation', (maxPods, mb) => {
    expect(poolResourceLimits(maxPods).maxYoungGenerationSizeMb).toBe(mb);
  });

  it('the default node gets the long-lived threads’ floor', () => {
    expect(poolResourceLimits(110)).toEqual(WORKER_RESOURCE_LIMITS);
  });
});
