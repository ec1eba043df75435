/** The soak's result (bench/soak.bench.ts) and its markdown (bench/results/soak.md). */
import type { SoakBound, SoakSample, SoakVerdict } from './soak-stats.js';

export interface CrashLoopCheck {
  pods: number;
  restartsTotal: number;
  minRestarts: number;
  maxRestarts: number;
  /** Pods whose restart count upstream's back-off does not allow (too many: no back-off; too few: stuck). */
  outOfBounds: string[];
  duplicates: string[];
  /** The most exited containers one crash-looping pod had left in the runtime at the end (container GC). */
  maxExitedKept: number;
}

export interface SoakEnd {
  lost: string[];
  duplicates: string[];
  healthyRestarted: string[];
  /** Containers that never started beside the running one: reported, not a broken invariant (as in the fault suite). */
  startsInterrupted: string[];
  statusDisagreements: string[];
  crashLoop: CrashLoopCheck;
}

export interface SoakResult {
  command: string;
  minutes: number;
  everyS: number;
  warmupMin: number;
  pods: number;
  longPods: number;
  crashingPods: number;
  verbosity: number;
  /** When /pods first showed every long-running pod Running (s after /healthz). */
  allRunningAtS: number | undefined;
  bound: SoakBound;
  verdict: SoakVerdict;
  end: SoakEnd | undefined;
  last: SoakSample & { crashRestarts: number };
}

/** Whether every end check holds. */
export function endHeld(e: SoakEnd): boolean {
  return (
    e.lost.length +
      e.duplicates.length +
      e.healthyRestarted.length +
      e.statusDisagreements.length +
      e.crashLoop.outOfBounds.length +
      e.crashLoop.duplicates.length ===
    0
  );
}

const r = (x: number, d = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : 'n/a');
const list = (xs: string[]) => (xs.length === 0 ? '0' : `${xs.length}: ${xs.slice(0, 5).join('; ')}${xs.length > 5 ? ' …' : ''}`);

export function renderSoak(s: SoakResult, machine: Record<string, unknown>): string {
  const v = s.verdict;
  const b = s.bound;
  const e = s.end;
  const lines = [
    `# Soak: ${s.pods} static pods on the embedded sim, ${s.crashingPods} crash-looping, ${s.minutes} min`,
    '',
    `\`${s.command}\`; one sample every ${s.everyS} s (${v.steadySamples} after the ${s.warmupMin}-minute warm-up); agent at \`--v=${s.verbosity}\`. ` +
      `${s.longPods} long-running pods (\`sleep infinity\`; every tenth with two containers) were all Running ` +
      `${s.allRunningAtS === undefined ? 'never' : `${s.allRunningAtS} s after /healthz`}.`,
    '',
    `**Bound: ${v.held ? 'held' : 'BROKEN'}.** After warm-up: RSS slope ≤ ${b.rssSlopeMiBPerHour} MiB/h and no RSS sample over the warm-up level ` +
      `(median of its last minute) + ${b.overWarmupRatio * 100} %; slope of the heap's floor (lowest sample of each minute) ≤ ${b.heapFloorSlopeMiBPerHour} MiB/h; ` +
      `no sample over the warm-up level + ${b.fdSlack} descriptors; event-loop lag p99 (median of the 10 s windows) of the last 5 min ≤ that of the first 5 min + ${b.lagGrowthMs} ms.` +
      (v.broken.length ? ` Broken: ${v.broken.join('; ')}.` : ''),
    '',
    '| series | warm-up level | max after warm-up | slope after warm-up (per hour) |',
    '|---|---:|---:|---:|',
    `| RSS (MiB) | ${r(v.warmupLevel.rssMiB)} | ${r(v.max.rssMiB)} | ${r(v.rssSlopeMiBPerHour, 2)} |`,
    `| main-thread heap used (MiB) | ${r(v.warmupLevel.heapMiB)} | ${r(v.max.heapMiB)} | floor ${r(v.heapFloorSlopeMiBPerHour, 2)} (every sample ${r(v.heapSlopeMiBPerHour, 2)}) |`,
    `| open descriptors | ${v.warmupLevel.fds} | ${v.max.fds} | ${r(v.fdSlopePerHour, 2)} |`,
    '',
    `Event-loop lag (prom-client's \`nodejs_eventloop_lag_*\`, \`monitorEventLoopDelay\` at its 10 ms resolution, which is part of each figure; ` +
      `one window per sample): median window p99 ${r(v.lag.firstFiveMinMedianP99Ms, 2)} ms in the first 5 min after warm-up, ` +
      `${r(v.lag.lastFiveMinMedianP99Ms, 2)} ms in the last 5 min; the longest delay seen after warm-up ${r(v.lag.maxMs, 1)} ms.`,
    '',
    `Agent log (stdout and stderr, pino text at \`--v=${s.verbosity}\`): ${r(v.logBytesPerHour / 1024, 1)} KiB per hour after warm-up (slope of its size), ` +
      `${r(s.last.logBytes / 1024, 1)} KiB in all, warm-up included.`,
    '',
  ];
  if (e) {
    const c = e.crashLoop;
    lines.push(
      `**End checks: ${endHeld(e) ? 'held' : 'BROKEN'}.** Long-running pods (the fault suite's invariants, \`test/faults/invariants.ts\`, baseline at the end of warm-up): ` +
        `lost ${list(e.lost)}, duplicates ${list(e.duplicates)}, healthy containers restarted ${list(e.healthyRestarted)}, ` +
        `/pods disagreeing with the runtime ${list(e.statusDisagreements)}; starts cut off (not an invariant) ${list(e.startsInterrupted)}. ` +
        `Crash-looping pods: ${c.restartsTotal} restarts in all, ${c.minRestarts}–${c.maxRestarts} per container; ` +
        `outside what upstream's back-off (10 s doubling to 5 min) allows ${list(c.outOfBounds)}; duplicates ${list(c.duplicates)}; ` +
        `at most ${c.maxExitedKept} exited container(s) of one pod left in the runtime.`,
      '',
    );
  } else lines.push('**End checks: not run** (the run stopped early).', '');
  lines.push(`Machine: ${JSON.stringify(machine)}`, '');
  return lines.join('\n');
}
