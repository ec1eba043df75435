/**
 * Node pressure conditions as the eviction manager holds them (upstream
 * pkg/kubelet/eviction nodeConditionsLastObservedAt/ObservedSince), and a
 * threshold's amount for a capacity:
 * - A condition is reported while it was observed within the last
 *   evictionPressureTransitionPeriod, so it does not flap (and, as upstream, a
 *   period of 0 reports nothing).
 * Which signals meet which thresholds is eviction/thresholds.ts.
 */
import { parseQuantity, value } from '../../api/quantity.js';
import type { Clock } from '../../common/clock.js';

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

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
