/**
 * Logs a repeating failure once per interval instead of once per attempt: the
 * first failure is logged at once, repeats within `intervalMs` are only counted
 * and reported with the next line, and the first success after failures logs a
 * recovery line. Used by loops that retry against the apiserver with backoff.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import { errorMessage } from './error-message.js';

export class FailureLog {
  private lastLogged = -Infinity;
  private suppressed = 0;
  private failing = false;

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly what: string,
    private readonly intervalMs = 30_000,
  ) {}

  failure(err: unknown, fields: Record<string, unknown> = {}): void {
    this.failing = true;
    const now = this.clock.now();
    if (now - this.lastLogged < this.intervalMs) {
      this.suppressed++;
      return;
    }
    const extra = this.suppressed > 0 ? { suppressedSince: this.suppressed } : {};
    this.logger.error({ ...fields, ...extra, err: errorMessage(err) }, `${this.what} failed`);
    this.lastLogged = now;
    this.suppressed = 0;
  }

  success(fields: Record<string, unknown> = {}): void {
    if (!this.failing) return;
    this.logger.info({ ...fields, failuresSinceLastLog: this.suppressed }, `${this.what} succeeded again`);
    this.failing = false;
    this.suppressed = 0;
    this.lastLogged = -Infinity;
  }
}
