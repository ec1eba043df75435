/**
 * Eviction thresholds (upstream pkg/kubelet/eviction helpers.go and
 * api/types.go): parsing from the configuration, and the pure steps of each
 * synchronize that decide which thresholds are met, which have waited out
 * their grace period, and which node conditions they raise.
 *
 * Contract:
 * - A threshold is met when the observed available amount is below its value
 *   (a quantity, or a percentage of the observed capacity, float32 as
 *   upstream); with enforceMinReclaim the value is raised by the threshold's
 *   minimum reclaim, so a threshold stays met until that much more is free.
 * - A soft threshold without a grace period is refused at start, as upstream
 *   ParseThresholdConfig refuses it; "0%" and "100%" are ignored (upstream
 *   parseThresholdStatement returns no threshold for them).
 * Pure; main thread.
 */
import { value } from '../../api/quantity.js';
import { ConfigError } from '../../common/errors.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { thresholdAmount, type PressureCondition } from '../node/pressure.js';

export type Signal =
  | 'memory.available'
  | 'allocatableMemory.available'
  | 'nodefs.available'
  | 'nodefs.inodesFree'
  | 'imagefs.available'
  | 'imagefs.inodesFree'
  | 'containerfs.available'
  | 'containerfs.inodesFree'
  | 'pid.available';

/** What evicting a pod reclaims, per signal (upstream signalToResource). */
export type ReclaimResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

export const SIGNAL_RESOURCE: Record<Signal, ReclaimResource> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'containerfs.available': 'ephemeral-storage',
  'containerfs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

export const SIGNAL_CONDITION: Record<Signal, PressureCondition> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

export interface Threshold {
  signal: Signal;
  /** "10%" or a quantity ("100Mi", "1000"), as configured. */
  value: string;
  /** 0 for a hard threshold. */
  gracePeriodMs: number;
  /** evictionMinimumReclaim of the signal, as configured. */
  minReclaim?: string;
}

export interface SignalObservation {
  available: bigint;
  capacity: bigint;
  /** When the figure was measured (ms), if known. */
  time?: number;
}

export type Observations = Partial<Record<Signal, SignalObservation>>;

export type EvictionConfig = Pick<
  KubeletConfig,
  'evictionHard' | 'evictionSoft' | 'evictionSoftGracePeriod' | 'evictionMinimumReclaim' | 'evictionMaxPodGracePeriod'
>;

const isPercent = (v: string) => v.trim().endsWith('%');

function statements(map: Record<string, string>, field: string): { signal: Signal; value: string }[] {
  const out: { signal: Signal; value: string }[] = [];
  for (const [signal, raw] of Object.entries(map)) {
    const v = raw.trim();
    if (isPercent(v)) {
      const pct = Number(v.slice(0, -1));
      if (!Number.isFinite(pct) || pct < 0 || pct > 100)
        throw new ConfigError(`${field}.${signal}: eviction percentage ${JSON.stringify(raw)} must be between 0% and 100%`);
      if (pct === 0 || pct === 100) continue;
    } else if (value(v) < 0n) {
      throw new ConfigError(`${field}.${signal}: eviction threshold ${JSON.stringify(raw)} must be positive`);
    }
    out.push({ signal: signal as Signal, value: v });
  }
  return out;
}

/** Upstream ParseThresholdConfig: hard thresholds, then soft ones with their grace periods; minimum reclaims attached. */
export function parseThresholds(c: EvictionConfig): Threshold[] {
  const minReclaim = (signal: Signal) => c.evictionMinimumReclaim[signal];
  const out: Threshold[] = statements(c.evictionHard, 'evictionHard').map((s) => ({ ...s, gracePeriodMs: 0 }));
  for (const s of statements(c.evictionSoft, 'evictionSoft')) {
    const grace = c.evictionSoftGracePeriod[s.signal];
    if (grace === undefined)
      throw new ConfigError(
        `evictionSoft.${s.signal}: grace period must be specified for the soft eviction threshold ${s.signal} (set evictionSoftGracePeriod.${s.signal})`,
      );
    out.push({ ...s, gracePeriodMs: grace });
  }
  for (const t of out) {
    const m = minReclaim(t.signal);
    if (m !== undefined) t.minReclaim = m;
  }
  return out;
}

export const isHard = (t: Threshold): boolean => t.gracePeriodMs === 0;

/** The amount below which the signal meets the threshold. */
function thresholdQuantity(t: Threshold, o: SignalObservation, enforceMinReclaim: boolean): bigint {
  let q = thresholdAmount(t.value, o.capacity);
  if (enforceMinReclaim && t.minReclaim) q += thresholdAmount(t.minReclaim, o.capacity);
  return q;
}

/** Upstream thresholdsMet. */
export function thresholdsMet(thresholds: readonly Threshold[], obs: Observations, enforceMinReclaim: boolean): Threshold[] {
  return thresholds.filter((t) => {
    const o = obs[t.signal];
    return o !== undefined && thresholdQuantity(t, o, enforceMinReclaim) > o.available;
  });
}

const sameThreshold = (a: Threshold, b: Threshold) => a.signal === b.signal && a.gracePeriodMs === b.gracePeriodMs && a.value === b.value;

/** Upstream mergeThresholds: a, then what of b is not already in it. */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const out = [...a];
  for (const t of b) if (!out.some((x) => sameThreshold(x, t))) out.push(t);
  return out;
}

/** When each met threshold was first observed: kept from `last` for thresholds still met, `now` for new ones. */
export function thresholdsFirstObservedAt(
  met: readonly Threshold[],
  last: ReadonlyMap<Threshold, number>,
  now: number,
): Map<Threshold, number> {
  const out = new Map<Threshold, number>();
  for (const t of met) {
    const kept = [...last].find(([k]) => sameThreshold(k, t));
    out.set(t, kept ? kept[1] : now);
  }
  return out;
}

/** Upstream thresholdsMetGracePeriod. */
export function thresholdsMetGracePeriod(observedAt: ReadonlyMap<Threshold, number>, now: number): Threshold[] {
  return [...observedAt].filter(([t, at]) => now - at >= t.gracePeriodMs).map(([t]) => t);
}

/** Upstream nodeConditions: in the thresholds' order, each once. */
export function nodeConditions(met: readonly Threshold[]): PressureCondition[] {
  const out: PressureCondition[] = [];
  for (const t of met) if (!out.includes(SIGNAL_CONDITION[t.signal])) out.push(SIGNAL_CONDITION[t.signal]);
  return out;
}

/** Upstream thresholdsUpdatedStats: thresholds whose observation is newer than the last synchronize's. */
export function thresholdsUpdatedStats(thresholds: readonly Threshold[], obs: Observations, last: Observations): Threshold[] {
  return thresholds.filter((t) => {
    const o = obs[t.signal];
    if (!o) return false;
    const l = last[t.signal];
    return !l || o.time === undefined || l.time === undefined || o.time > l.time;
  });
}

/** Upstream byEvictionPriority + getReclaimableThreshold: memory first; the first threshold with a resource to reclaim. */
export function thresholdToReclaim(thresholds: readonly Threshold[]): Threshold | undefined {
  const memory = thresholds.filter((t) => SIGNAL_RESOURCE[t.signal] === 'memory');
  return memory[0] ?? thresholds[0];
}
