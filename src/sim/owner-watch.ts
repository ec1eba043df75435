/**
 * The simulated runtime's watch on the agent that owns it (`--owner-pid-file`,
 * `--orphan-grace`): every `intervalMs` it reads the owner's pid and asks
 * whether that process is alive. A missing or unreadable file counts as a
 * dead owner. When the owner has been dead for `graceMs` the watch calls
 * `onOrphaned` once and stops; a live pid in the file (the same agent, or a
 * new one that took the runtime over) cancels the countdown. Logs one line
 * when the countdown starts, when it is cancelled and when it expires.
 */
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import { runPeriodically } from '../common/periodic.js';

export interface OwnerWatchOptions {
  clock: Clock;
  graceMs: number;
  intervalMs?: number;
  readOwner: () => number | undefined;
  isAlive: (pid: number) => boolean;
  logger: Logger;
  onOrphaned: () => void;
}

export type OwnerState = 'owned' | 'orphaned' | 'expired';

export class OwnerWatch {
  private deadSince: number | undefined;
  private lastOwner: number | undefined;
  private expired = false;
  private readonly stopped = new AbortController();
  private readonly intervalMs: number;

  constructor(private readonly opts: OwnerWatchOptions) {
    this.intervalMs = opts.intervalMs ?? 1000;
  }

  /** One check: reads the owner file now and updates the countdown. */
  check(): OwnerState {
    if (this.expired) return 'expired';
    const { clock, logger, graceMs } = this.opts;
    const pid = this.opts.readOwner();
    if (pid !== undefined && this.opts.isAlive(pid)) {
      if (this.deadSince !== undefined) logger.info({ ownerPid: pid }, 'Taken over by a new agent');
      this.deadSince = undefined;
      this.lastOwner = pid;
      return 'owned';
    }
    const now = clock.now();
    if (this.deadSince === undefined) {
      this.deadSince = now;
      logger.info(
        { ownerPid: pid ?? this.lastOwner, graceSeconds: graceMs / 1000 },
        'The owning agent is gone; exiting after the grace period unless an agent takes over',
      );
    }
    if (now - this.deadSince < graceMs) return 'orphaned';
    this.expired = true;
    this.stop();
    logger.info({ ownerPid: pid ?? this.lastOwner, graceSeconds: graceMs / 1000 }, 'The owning agent stayed gone; exiting');
    this.opts.onOrphaned();
    return 'expired';
  }

  /** Checks now and then every intervalMs until stop() or expiry. */
  start(): void {
    // check() stops the loop itself on expiry.
    runPeriodically(() => this.check(), {
      periodMs: this.intervalMs,
      immediate: true,
      signal: this.stopped.signal,
      clock: this.opts.clock,
      onError: () => undefined,
    }).catch(() => undefined);
  }

  stop(): void {
    this.stopped.abort();
  }
}
