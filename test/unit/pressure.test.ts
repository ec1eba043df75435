import { describe, expect, it } from 'vitest';
import { PressureTracker, thresholdAmount, type PressureCondition } from '../../src/main/node/pressure.js';
import { nodeConditions, thresholdsMet, type Observations, type Signal } from '../../src/main/eviction/thresholds.js';
import { FakeClock } from '../fakes/fake-clock.js';

const MI = 1024n * 1024n;
const GI = 1024n * MI;

// Upstream evictionapi.GetThresholdQuantity: a quantity as is, a percentage as
// int64(float64(capacity) * float64(float32(pct)/100)) (parsePercentage is float32).
describe('thresholdAmount', () => {
  it.each([
    ['100Mi', 8n * GI, 100n * MI],
    ['1Gi', 0n, GI],
    ['500', 1000n, 500n],
    ['10%', 1000n, 100n],
    ['7.5%', 1000n, 75n],
    ['50%', 8n * GI, 4n * GI],
    // float32(10)/100 = 0.100000001490116…: 8589934592 × that = 858993472.0
    ['10%', 8n * GI, 858993472n],
    // 107374182400 × float32(0.05) = 5368709200.0…
    ['5%', 100n * GI, 5368709200n],
  ])('%s of capacity %s → %s', (threshold, capacity, expected) => {
    expect(thresholdAmount(threshold, capacity)).toBe(expected);
  });
});

const obs = (available: bigint, capacity = 8n * GI) => ({ available, capacity });

// Upstream signalToNodeCondition and thresholdsMet: met when threshold > available
// (strictly); hard and soft thresholds both count, whatever the grace period.
describe('conditions from thresholds met', () => {
  it.each<{ name: string; thresholds: Record<string, string>[]; observations: Observations; expected: PressureCondition[] }>([
    {
      name: 'memory below threshold',
      thresholds: [{ 'memory.available': '100Mi' }],
      observations: { 'memory.available': obs(99n * MI) },
      expected: ['MemoryPressure'],
    },
    {
      name: 'memory exactly at threshold',
      thresholds: [{ 'memory.available': '100Mi' }],
      observations: { 'memory.available': obs(100n * MI) },
      expected: [],
    },
    {
      name: 'memory above threshold',
      thresholds: [{ 'memory.available': '100Mi' }],
      observations: { 'memory.available': obs(GI) },
      expected: [],
    },
    {
      name: 'memory percentage',
      thresholds: [{ 'memory.available': '10%' }],
      observations: { 'memory.available': obs(99n, 1000n) },
      expected: ['MemoryPressure'],
    },
    {
      name: 'nodefs.available',
      thresholds: [{ 'nodefs.available': '10%' }],
      observations: { 'nodefs.available': obs(5n, 100n) },
      expected: ['DiskPressure'],
    },
    {
      name: 'nodefs.inodesFree',
      thresholds: [{ 'nodefs.inodesFree': '5%' }],
      observations: { 'nodefs.inodesFree': obs(4n, 100n) },
      expected: ['DiskPressure'],
    },
    {
      name: 'imagefs.available',
      thresholds: [{ 'imagefs.available': '15%' }],
      observations: { 'imagefs.available': obs(14n, 100n) },
      expected: ['DiskPressure'],
    },
    {
      name: 'imagefs.inodesFree',
      thresholds: [{ 'imagefs.inodesFree': '5%' }],
      observations: { 'imagefs.inodesFree': obs(1n, 100n) },
      expected: ['DiskPressure'],
    },
    {
      name: 'pid.available',
      thresholds: [{ 'pid.available': '1000' }],
      observations: { 'pid.available': obs(999n, 32768n) },
      expected: ['PIDPressure'],
    },
    { name: 'no observation for the signal', thresholds: [{ 'memory.available': '100Mi' }], observations: {}, expected: [] },
    {
      name: 'a soft threshold counts for the condition (grace period ignored)',
      thresholds: [{ 'memory.available': '100Mi' }, { 'memory.available': '1Gi' }],
      observations: { 'memory.available': obs(500n * MI) },
      expected: ['MemoryPressure'],
    },
    {
      name: 'several conditions at once',
      thresholds: [{ 'memory.available': '100Mi', 'nodefs.available': '10%', 'pid.available': '100' }],
      observations: { 'memory.available': obs(MI), 'nodefs.available': obs(1n, 100n), 'pid.available': obs(5000n, 32768n) },
      expected: ['MemoryPressure', 'DiskPressure'],
    },
  ])('$name', ({ thresholds, observations, expected }) => {
    const ts = thresholds.flatMap((m) =>
      Object.entries(m).map(([signal, value]) => ({ signal: signal as Signal, value, gracePeriodMs: 0 })),
    );
    expect(nodeConditions(thresholdsMet(ts, observations, false)).sort()).toEqual([...expected].sort());
  });
});

// Upstream nodeConditionsLastObservedAt + nodeConditionsObservedSince: a condition
// is reported while now - lastObservedAt < evictionPressureTransitionPeriod.
describe('PressureTracker (evictionPressureTransitionPeriod)', () => {
  type Step = { at: number; met: PressureCondition[] | null; under: boolean };
  it.each<{ name: string; periodMs: number; steps: Step[] }>([
    {
      name: 'held for the period after it was last met',
      periodMs: 300_000,
      steps: [
        { at: 0, met: [], under: false },
        { at: 10_000, met: ['MemoryPressure'], under: true },
        { at: 20_000, met: [], under: true },
        { at: 309_999, met: [], under: true },
        { at: 310_000, met: [], under: false },
      ],
    },
    {
      name: 'a new observation restarts the period',
      periodMs: 300_000,
      steps: [
        { at: 0, met: ['MemoryPressure'], under: true },
        { at: 200_000, met: ['MemoryPressure'], under: true },
        { at: 300_000, met: [], under: true },
        { at: 499_999, met: null, under: true },
        { at: 500_000, met: null, under: false },
      ],
    },
    {
      name: 'other conditions are independent',
      periodMs: 60_000,
      steps: [
        { at: 0, met: ['DiskPressure'], under: false },
        { at: 1000, met: ['PIDPressure'], under: false },
      ],
    },
    // With a period of 0, now.Sub(lastObservedAt) < 0 never holds: upstream never
    // reports the condition, even while the threshold is met.
    {
      name: 'period 0',
      periodMs: 0,
      steps: [
        { at: 0, met: ['MemoryPressure'], under: false },
        { at: 10_000, met: [], under: false },
      ],
    },
  ])('$name', ({ periodMs, steps }) => {
    const clock = new FakeClock(0);
    const tracker = new PressureTracker(periodMs, clock);
    for (const s of steps) {
      clock.step(s.at - clock.now());
      if (s.met) tracker.update(new Set(s.met));
      expect({ at: s.at, under: tracker.under('MemoryPressure') }).toEqual({ at: s.at, under: s.under });
    }
  });
});
