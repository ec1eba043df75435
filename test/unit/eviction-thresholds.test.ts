import { describe, expect, it } from 'vitest';
import {
  mergeThresholds,
  nodeConditions,
  parseThresholds,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdToReclaim,
  type EvictionConfig,
  type Threshold,
} from '../../src/main/eviction/thresholds.js';

const MI = 1024n * 1024n;
const base: EvictionConfig = {
  evictionHard: {},
  evictionSoft: {},
  evictionSoftGracePeriod: {},
  evictionMinimumReclaim: {},
  evictionMaxPodGracePeriod: 0,
};

describe('parseThresholds (upstream ParseThresholdConfig)', () => {
  it('reads hard, then soft thresholds with their grace periods and minimum reclaims', () => {
    const t = parseThresholds({
      ...base,
      evictionHard: { 'memory.available': '150Mi', 'nodefs.available': '10%' },
      evictionSoft: { 'memory.available': '300Mi' },
      evictionSoftGracePeriod: { 'memory.available': 30_000 },
      evictionMinimumReclaim: { 'memory.available': '0', 'nodefs.available': '500Mi' },
    });
    expect(t).toEqual([
      { signal: 'memory.available', value: '150Mi', gracePeriodMs: 0, minReclaim: '0' },
      { signal: 'nodefs.available', value: '10%', gracePeriodMs: 0, minReclaim: '500Mi' },
      { signal: 'memory.available', value: '300Mi', gracePeriodMs: 30_000, minReclaim: '0' },
    ]);
  });

  it('refuses a soft threshold without a grace period, naming the field', () => {
    expect(() => parseThresholds({ ...base, evictionSoft: { 'nodefs.available': '15%' } })).toThrow(
      /evictionSoft\.nodefs\.available: grace period must be specified/,
    );
  });

  it('ignores 0% and 100% and refuses percentages out of range', () => {
    expect(parseThresholds({ ...base, evictionHard: { 'memory.available': '0%', 'nodefs.available': '100%' } })).toEqual([]);
    expect(() => parseThresholds({ ...base, evictionHard: { 'memory.available': '120%' } })).toThrow(/between 0% and 100%/);
  });
});

const hardMem: Threshold = { signal: 'memory.available', value: '1Gi', gracePeriodMs: 0, minReclaim: '500Mi' };
const softDisk: Threshold = { signal: 'nodefs.available', value: '10%', gracePeriodMs: 60_000 };

describe('thresholdsMet (upstream TestThresholdsMet)', () => {
  it.each([
    ['below the threshold', 500n * MI, false, true],
    ['above the threshold', 2048n * MI, false, false],
    ['above the threshold but within min reclaim', 1300n * MI, true, true],
    ['above threshold plus min reclaim', 3072n * MI, true, false],
  ])('%s', (_name, available, enforce, met) => {
    const obs = { 'memory.available': { available, capacity: 8192n * MI } };
    expect(thresholdsMet([hardMem], obs, enforce)).toEqual(met ? [hardMem] : []);
  });

  it('never meets a threshold without an observation', () => {
    expect(thresholdsMet([softDisk], {}, false)).toEqual([]);
  });

  it('takes percentages of the observed capacity', () => {
    expect(thresholdsMet([softDisk], { 'nodefs.available': { available: 99n, capacity: 1000n } }, false)).toEqual([softDisk]);
    expect(thresholdsMet([softDisk], { 'nodefs.available': { available: 101n, capacity: 1000n } }, false)).toEqual([]);
  });
});

describe('grace periods and conditions', () => {
  it('keeps the first observation time of a threshold still met, and waits out its grace period', () => {
    const first = thresholdsFirstObservedAt([softDisk], new Map(), 1000);
    expect(thresholdsMetGracePeriod(first, 1000 + 59_999)).toEqual([]);
    const again = thresholdsFirstObservedAt([{ ...softDisk }], first, 30_000);
    expect([...again.values()]).toEqual([1000]);
    expect(thresholdsMetGracePeriod(again, 61_000)).toHaveLength(1);
  });

  it('a hard threshold is due at once', () => {
    expect(thresholdsMetGracePeriod(thresholdsFirstObservedAt([hardMem], new Map(), 5), 5)).toEqual([hardMem]);
  });

  it('maps signals to conditions once each, and merges without duplicates', () => {
    const pid: Threshold = { signal: 'pid.available', value: '100', gracePeriodMs: 0 };
    expect(nodeConditions([softDisk, hardMem, { ...softDisk, signal: 'imagefs.available' }, pid])).toEqual([
      'DiskPressure',
      'MemoryPressure',
      'PIDPressure',
    ]);
    expect(mergeThresholds([hardMem], [{ ...hardMem }, softDisk])).toEqual([hardMem, softDisk]);
  });

  it('reclaims memory before anything else (upstream byEvictionPriority)', () => {
    expect(thresholdToReclaim([softDisk, hardMem])).toBe(hardMem);
    expect(thresholdToReclaim([softDisk])).toBe(softDisk);
    expect(thresholdToReclaim([])).toBeUndefined();
  });
});
