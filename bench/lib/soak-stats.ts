/**
 * The soak's arithmetic (pure): least-squares slopes, the bound a long run is
 * held to after its warm-up, the rate of a growing counter (log bytes), and
 * how many times a crash-looping container can have been restarted under
 * upstream's CrashLoopBackOff (10 s doubling to 5 min) in a given time.
 */

export interface Point {
  /** Seconds. */
  t: number;
  y: number;
}

/** Least-squares slope of y over t (seconds), in units per hour; 0 for fewer than two distinct times. */
export function slopePerHour(points: readonly Point[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.t - mt) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.t - mt) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 3600;
}

/**
 * The lowest y of each `binS`-second bin (at the bin's middle): the floor of a sawtooth. The main-thread
 * heap in use climbs between collections and drops at each; a leak raises its floor, whatever the phase
 * of the samples.
 */
export function floorSeries(points: readonly Point[], binS = 60): Point[] {
  const bins = new Map<number, number>();
  for (const p of points) {
    const b = Math.floor(p.t / binS);
    bins.set(b, Math.min(bins.get(b) ?? Infinity, p.y));
  }
  return [...bins].sort((a, b) => a[0] - b[0]).map(([b, y]) => ({ t: (b + 0.5) * binS, y }));
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** One sample of the agent, every few seconds. */
export interface SoakSample {
  /** Seconds since the agent answered /healthz. */
  t: number;
  rssMiB: number;
  heapMiB: number;
  fds: number;
  /** Event-loop lag p99 over the window since the previous sample (prom-client's nodejs_eventloop_lag_p99_seconds), ms. */
  lagP99Ms: number;
  lagMaxMs: number;
  /** Bytes the agent has written to its log (stdout + stderr) so far. */
  logBytes: number;
}

export interface SoakBound {
  /** Least-squares slope after warm-up, MiB per hour: of every RSS sample, and of the heap's floor (floorSeries, 1-min bins). */
  rssSlopeMiBPerHour: number;
  heapFloorSlopeMiBPerHour: number;
  /** No RSS sample after warm-up above the warm-up level × (1 + this). */
  overWarmupRatio: number;
  /** No sample after warm-up with more descriptors than the warm-up level + this. */
  fdSlack: number;
  /** Median window lag p99 of the last 5 min at most that of the first 5 min after warm-up + this (ms). */
  lagGrowthMs: number;
}

export const DEFAULT_SOAK_BOUND: SoakBound = Object.freeze({
  rssSlopeMiBPerHour: 10,
  heapFloorSlopeMiBPerHour: 5,
  overWarmupRatio: 0.3,
  fdSlack: 16,
  lagGrowthMs: 10,
});

export interface SoakVerdict {
  /** The samples judged: t ≥ warm-up. */
  steadySamples: number;
  /** Median of the last minute of warm-up: the level later samples are held to. */
  warmupLevel: { rssMiB: number; heapMiB: number; fds: number };
  rssSlopeMiBPerHour: number;
  /** Of every heap sample (the sawtooth; reported, not bounded). */
  heapSlopeMiBPerHour: number;
  heapFloorSlopeMiBPerHour: number;
  fdSlopePerHour: number;
  max: { rssMiB: number; heapMiB: number; fds: number };
  lag: { firstFiveMinMedianP99Ms: number; lastFiveMinMedianP99Ms: number; maxMs: number };
  /** Log bytes per hour: the slope of the log size after warm-up. */
  logBytesPerHour: number;
  held: boolean;
  /** Each broken part of the bound, in words. */
  broken: string[];
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/**
 * Holds the samples after `warmupS` to `bound`. Throws when there is no sample in the last minute
 * of warm-up or none after it: such a run cannot be judged.
 */
export function judgeSoak(samples: readonly SoakSample[], warmupS: number, bound: SoakBound = DEFAULT_SOAK_BOUND): SoakVerdict {
  const level = samples.filter((s) => s.t >= warmupS - 60 && s.t < warmupS);
  const steady = samples.filter((s) => s.t >= warmupS);
  if (level.length === 0) throw new Error(`no sample in the last minute of the ${warmupS} s warm-up`);
  if (steady.length < 2) throw new Error(`${steady.length} sample(s) after the ${warmupS} s warm-up: at least 2 are needed`);
  const warmupLevel = {
    rssMiB: median(level.map((s) => s.rssMiB)),
    heapMiB: median(level.map((s) => s.heapMiB)),
    fds: median(level.map((s) => s.fds)),
  };
  const series = (k: keyof SoakSample) => steady.map((s) => ({ t: s.t, y: s[k] }));
  const rssSlope = slopePerHour(series('rssMiB'));
  const heapSlope = slopePerHour(series('heapMiB'));
  const heapFloorSlope = slopePerHour(floorSeries(series('heapMiB')));
  const max = {
    rssMiB: Math.max(...steady.map((s) => s.rssMiB)),
    heapMiB: Math.max(...steady.map((s) => s.heapMiB)),
    fds: Math.max(...steady.map((s) => s.fds)),
  };
  const end = steady[steady.length - 1].t;
  const first = steady.filter((s) => s.t < warmupS + 300).map((s) => s.lagP99Ms);
  const last = steady.filter((s) => s.t > end - 300).map((s) => s.lagP99Ms);
  const lag = {
    firstFiveMinMedianP99Ms: median(first),
    lastFiveMinMedianP99Ms: median(last),
    maxMs: Math.max(...steady.map((s) => s.lagMaxMs)),
  };
  const broken: string[] = [];
  if (rssSlope > bound.rssSlopeMiBPerHour) broken.push(`RSS slope ${r1(rssSlope)} MiB/h > ${bound.rssSlopeMiBPerHour} MiB/h`);
  if (heapFloorSlope > bound.heapFloorSlopeMiBPerHour)
    broken.push(`heap floor slope ${r1(heapFloorSlope)} MiB/h > ${bound.heapFloorSlopeMiBPerHour} MiB/h`);
  const rssLimit = warmupLevel.rssMiB * (1 + bound.overWarmupRatio);
  if (max.rssMiB > rssLimit)
    broken.push(`RSS ${r1(max.rssMiB)} MiB > warm-up level ${r1(warmupLevel.rssMiB)} MiB + ${bound.overWarmupRatio * 100} %`);
  if (max.fds > warmupLevel.fds + bound.fdSlack) broken.push(`${max.fds} fds > warm-up level ${warmupLevel.fds} + ${bound.fdSlack}`);
  if (lag.lastFiveMinMedianP99Ms > lag.firstFiveMinMedianP99Ms + bound.lagGrowthMs)
    broken.push(
      `event-loop lag p99 (median of 10 s windows) ${r1(lag.lastFiveMinMedianP99Ms)} ms in the last 5 min > ${r1(lag.firstFiveMinMedianP99Ms)} ms after warm-up + ${bound.lagGrowthMs} ms`,
    );
  return {
    steadySamples: steady.length,
    warmupLevel,
    rssSlopeMiBPerHour: rssSlope,
    heapSlopeMiBPerHour: heapSlope,
    heapFloorSlopeMiBPerHour: heapFloorSlope,
    fdSlopePerHour: slopePerHour(series('fds')),
    max,
    lag,
    logBytesPerHour: slopePerHour(series('logBytes')),
    held: broken.length === 0,
    broken,
  };
}

export interface CrashLoopPolicy {
  initialS: number;
  maxS: number;
}

/** Upstream kubelet's CrashLoopBackOff: 10 s doubling to 300 s. */
export const UPSTREAM_CRASH_LOOP: CrashLoopPolicy = Object.freeze({ initialS: 10, maxS: 300 });

/**
 * Restarts of a container that exits `runS` after each start, `elapsedS` after its first start, when
 * each restart waits its back-off plus `lateS` (0: the most upstream allows). Upstream restarts after
 * the first exit at once (no back-off entry yet) and after the k-th exit (k ≥ 2) waits
 * min(initial × 2^(k−2), max) from that exit.
 */
export function crashLoopRestarts(elapsedS: number, runS: number, lateS = 0, policy: CrashLoopPolicy = UPSTREAM_CRASH_LOOP): number {
  let t = runS; // the first exit
  let restarts = 0;
  let delay = 0;
  for (;;) {
    const next = t + delay + lateS;
    if (next > elapsedS) return restarts;
    restarts++;
    t = next + runS;
    delay = delay === 0 ? policy.initialS : Math.min(delay * 2, policy.maxS);
  }
}
