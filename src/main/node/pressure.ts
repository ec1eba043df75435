/**
 * Node pressure as the eviction manager reports it in the node conditions
 * (upstream pkg/kubelet/eviction: signal observations, thresholdsMet, the
 * pressure transition period), without evicting anything:
 * - memory.available → MemoryPressure; nodefs.*, imagefs.* → DiskPressure;
 *   pid.available → PIDPressure.
 * - A threshold is met when the observed value is below it (a quantity, or a
 *   percentage of capacity). Hard and soft thresholds both count for conditions,
 *   soft ones regardless of their grace period, as upstream.
 * - A condition is reported while it was observed within the last
 *   evictionPressureTransitionPeriod, so it does not flap (and, as upstream, a
 *   period of 0 reports nothing).
 */
import { parseQuantity, value } from '../../api/quantity.js';
import type { Clock } from '../../common/clock.js';

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

const CONDITION_OF: Record<string, PressureCondition> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

export interface SignalObservation {
  available: bigint;
  capacity: bigint;
}

export type Observations = Partial<Record<string, SignalObservation>>;

/**
 * The threshold as an absolute amount for this capacity ("10%" of capacity, or a
 * quantity). Percentages are float32 as upstream parses them (float32(v)/100), so
 * the amount matches the Go kubelet's to the byte.
 */
export function thresholdAmount(threshold: string, capacity: bigint): bigint {
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(threshold);
  if (pct) return BigInt(Math.trunc(Number(capacity) * Math.fround(Math.fround(Number(pct[1])) / 100)));
  return value(parseQuantity(threshold));
}

/** Conditions whose thresholds are met by these observations. */
export function conditionsMet(thresholds: readonly Record<string, string>[], obs: Observations): Set<PressureCondition> {
  const met = new Set<PressureCondition>();
  for (const set of thresholds) {
    for (const [signal, threshold] of Object.entries(set)) {
      const condition = CONDITION_OF[signal];
      const o = obs[signal];
      if (!condition || !o) continue;
      if (o.available < thresholdAmount(threshold, o.capacity)) met.add(condition);
    }
  }
  return met;
}

/** Holds each condition for the transition period after it was last met (upstream nodeConditionsLastObservedAt). */
export class PressureTracker {
  private readonly lastObserved = new Map<PressureCondition, number>();

  constructor(
    private readonly transitionPeriodMs: number,
    private readonly clock: Clock,
  ) {}

  update(met: Set<PressureCondition>): void {
    const now = this.clock.now();
    for (const c of met) this.lastObserved.set(c, now);
  }

  under(condition: PressureCondition): boolean {
    // Upstream nodeConditionsObservedSince: observed within the period (so a period of 0 never reports).
    const at = this.lastObserved.get(condition);
    return at !== undefined && this.clock.now() - at < this.transitionPeriodMs;
  }
}
