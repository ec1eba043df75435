/**
 * The `log` health check (upstream healthz.LogHealthz): the logger is flushed
 * every minute; the check fails once no flush has completed for two minutes
 * (logging is blocked, e.g. stderr is a pipe nobody reads).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { runPeriodically } from '../../common/periodic.js';

export const LOG_FLUSH_PERIOD_MS = 60_000;
export const LOG_BLOCKED_AFTER_MS = 2 * 60_000;

export class LogHealth {
  private lastVerified: number;

  constructor(
    private readonly logger: Pick<Logger, 'flush'>,
    private readonly clock: Clock,
  ) {
    this.lastVerified = clock.now();
  }

  /** Flushes now and every minute until the signal aborts. */
  start(signal: AbortSignal): void {
    const flush = () =>
      this.logger.flush((err?: Error) => {
        if (!err) this.lastVerified = this.clock.now();
      });
    runPeriodically(flush, { periodMs: LOG_FLUSH_PERIOD_MS, firstDelayMs: 0, signal, clock: this.clock, onError: () => undefined }).catch(
      () => undefined,
    );
  }

  check(): { ok: boolean; message: string } {
    return this.clock.now() - this.lastVerified < LOG_BLOCKED_AFTER_MS
      ? { ok: true, message: 'ok' }
      : { ok: false, message: 'logging blocked' };
  }
}
