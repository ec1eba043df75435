/**
 * Says how the node is doing while it brings its pods up: every few seconds
 * a progress line (pods desired / admitted / running, and the first few
 * admitted pods not yet running by name), and one summary line
 * when every admitted pod is running or has completed. The counts are
 * checked every second, so the summary's time is within a second of the
 * convergence, but progress lines come at most once per period. They are
 * logged at info until the first convergence (the boot) and at V(2) after
 * it; a boot that has not converged after `quietAfterMs` logs one line
 * naming how many pods are not running and goes to V(2) too, so a pod that
 * can never start does not fill the log.
 *
 * The decision is `progressStep`, a pure function of the state, the counts
 * and the time; BootProgress ticks it on the injected clock.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { v } from '../../common/logger.js';
import { errorMessage } from '../../common/error-message.js';
import { runPeriodically } from '../../common/periodic.js';

export interface PodCounts {
  /** Pods the sources want on this node (mirror pods excluded). */
  desired: number;
  /** Desired pods that passed admission. */
  admitted: number;
  /** Admitted pods in phase Running. */
  running: number;
  /** Admitted pods in phase Succeeded or Failed. */
  completed: number;
}

export interface ProgressState {
  /** When the current unconverged period began; undefined while converged. */
  since: number | undefined;
  /** The node converged at least once (the boot is over). */
  booted: boolean;
  /** The stall line of the current period was logged. */
  stallLogged: boolean;
}

export type ProgressLine =
  | { kind: 'progress'; level: 'info' | 'v2' }
  | { kind: 'converged'; elapsedMs: number; boot: boolean }
  | { kind: 'stalled'; elapsedMs: number };

export const INITIAL_PROGRESS: ProgressState = { since: undefined, booted: false, stallLogged: false };

/** Converged: the sources have all delivered, and every admitted pod is running or done. */
export function converged(c: PodCounts, sourcesReady: boolean): boolean {
  return sourcesReady && c.running + c.completed === c.admitted;
}

export function progressStep(
  state: ProgressState,
  counts: PodCounts,
  sourcesReady: boolean,
  now: number,
  quietAfterMs: number,
): { state: ProgressState; line?: ProgressLine } {
  if (converged(counts, sourcesReady)) {
    if (state.since === undefined) return { state };
    return {
      state: { since: undefined, booted: true, stallLogged: false },
      line: { kind: 'converged', elapsedMs: now - state.since, boot: !state.booted },
    };
  }
  const since = state.since ?? now;
  const next = { ...state, since };
  if (state.booted || state.stallLogged) return { state: next, line: { kind: 'progress', level: 'v2' } };
  if (now - since >= quietAfterMs) return { state: { ...next, stallLogged: true }, line: { kind: 'stalled', elapsedMs: now - since } };
  return { state: next, line: { kind: 'progress', level: 'info' } };
}

/** How many pending pods a progress line names. */
export const PENDING_NAMED = 5;

/** PodCounts, and the first PENDING_NAMED admitted pods neither running nor completed ("namespace/name"). */
export type BootCounts = PodCounts & { pending: string[] };

/** The counts from the pods the sources want, their admission and their status phase (mirror pods are not in `pods`). */
export function bootCounts(
  pods: Iterable<{ metadata: { uid?: string; name?: string; namespace?: string } }>,
  rejected: (uid: string) => boolean,
  phase: (uid: string) => string | undefined,
): BootCounts {
  const counts: BootCounts = { desired: 0, admitted: 0, running: 0, completed: 0, pending: [] };
  for (const pod of pods) {
    const uid = pod.metadata.uid ?? '';
    counts.desired++;
    if (rejected(uid)) continue;
    counts.admitted++;
    const p = phase(uid);
    if (p === 'Running') counts.running++;
    else if (p === 'Succeeded' || p === 'Failed') counts.completed++;
    else if (counts.pending.length < PENDING_NAMED)
      counts.pending.push(`${pod.metadata.namespace ?? 'default'}/${pod.metadata.name ?? ''}`);
  }
  return counts;
}

export interface BootProgressOptions {
  clock: Clock;
  logger: Logger;
  counts(): BootCounts;
  /** Every source has delivered and the syncLoop has handled it (upstream sourcesReady). */
  sourcesReady(): boolean;
  /** How often the counts are checked. Default 1 s. */
  checkMs?: number;
  /** At most one progress line per period. Default 5 s. */
  periodMs?: number;
  /** The first look, default 1 s (a boot longer than that says so early). */
  firstMs?: number;
  /** Default 5 min. */
  quietAfterMs?: number;
}

export class BootProgress {
  private state: ProgressState;
  /** When the last progress line was logged in the current unconverged period. */
  private lastProgressAt: number | undefined;

  constructor(private readonly options: Readonly<BootProgressOptions>) {
    this.state = { ...INITIAL_PROGRESS, since: options.clock.now() };
  }

  start(signal: AbortSignal): void {
    runPeriodically(() => this.tick(), {
      periodMs: this.options.checkMs ?? 1_000,
      firstDelayMs: this.options.firstMs ?? 1_000,
      signal,
      clock: this.options.clock,
      onError: (err) => this.options.logger.error({ err: errorMessage(err) }, 'Start-up progress check failed'),
    }).catch(() => undefined);
  }

  tick(): void {
    const { pending, ...counts } = this.options.counts();
    const now = this.options.clock.now();
    const { state, line } = progressStep(this.state, counts, this.options.sourcesReady(), now, this.options.quietAfterMs ?? 300_000);
    this.state = state;
    if (!line) return;
    const { logger } = this.options;
    switch (line.kind) {
      case 'progress':
        if (this.lastProgressAt !== undefined && now - this.lastProgressAt < (this.options.periodMs ?? 5_000)) return;
        this.lastProgressAt = now;
        (line.level === 'info' ? logger : v(logger, 2)).info({ ...counts, pending }, 'Pods starting');
        return;
      case 'converged':
        this.lastProgressAt = undefined;
        logger.info(
          { ...counts, seconds: Math.round(line.elapsedMs / 100) / 10 },
          line.boot ? 'All pods started' : 'All pods running again',
        );
        return;
      case 'stalled':
        logger.warn(
          {
            ...counts,
            notRunning: counts.admitted - counts.running - counts.completed,
            pending,
            seconds: Math.round(line.elapsedMs / 1000),
          },
          'Pods still not running; further progress lines at --v=2',
        );
        return;
      default: {
        const never: never = line;
        throw new Error(`unhandled progress line ${String(never)}`);
      }
    }
  }
}
