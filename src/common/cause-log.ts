/**
 * Logs failures that share one cause once per cause instead of once per
 * subject: many pods failing to sync because the disk under the root
 * directory is full are one problem, not five hundred. The first failure of
 * a cause is logged at once (naming the subject it hit first); further
 * failures of it within `intervalMs` are only counted (each at V(4)), and
 * the next line after the interval says how many were counted and how many
 * subjects still fail. When the last failing subject of a cause succeeds, one
 * line says the cause has cleared: every subject it hit has succeeded since
 * (a subject that fails with another cause meanwhile still counts for the
 * first until it succeeds). Subjects are opaque keys (pod UIDs).
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';

interface CauseState {
  lastLogged: number;
  suppressed: number;
  failing: Set<string>;
  /** Every subject that failed with the cause since it was first seen. */
  affected: number;
}

export class CauseLog {
  private readonly causes = new Map<string, CauseState>();
  /** The causes each failing subject has failed with since its last success. */
  private readonly subjects = new Map<string, Set<string>>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly intervalMs = 30_000,
  ) {}

  /** A failure of `subject` with `cause`; `msg` and `fields` are the line's, when it is logged. */
  failure(cause: string, subject: string, msg: string, fields: Record<string, unknown> = {}): void {
    let state = this.causes.get(cause);
    if (!state) {
      state = { lastLogged: -Infinity, suppressed: 0, failing: new Set(), affected: 0 };
      this.causes.set(cause, state);
    }
    if (!state.failing.has(subject)) {
      state.failing.add(subject);
      state.affected++;
    }
    const causes = this.subjects.get(subject) ?? new Set<string>();
    causes.add(cause);
    this.subjects.set(subject, causes);
    const now = this.clock.now();
    if (now - state.lastLogged < this.intervalMs) {
      state.suppressed++;
      this.logger.debug({ ...fields, cause }, msg);
      return;
    }
    const counted = state.suppressed > 0 ? { suppressedSince: state.suppressed } : {};
    this.logger.error(
      { ...fields, cause, failing: state.failing.size, ...counted },
      `${msg} (one line per cause every ${Math.round(this.intervalMs / 1000)} s; the others at V(4))`,
    );
    state.lastLogged = now;
    state.suppressed = 0;
  }

  /** `subject` succeeded: each cause whose last failing subject it was has cleared. */
  success(subject: string): void {
    const causes = this.subjects.get(subject);
    if (!causes) return;
    this.subjects.delete(subject);
    for (const cause of causes) {
      const state = this.causes.get(cause);
      if (!state) continue;
      state.failing.delete(subject);
      if (state.failing.size > 0) continue;
      this.causes.delete(cause);
      this.logger.info({ cause, affected: state.affected, suppressed: state.suppressed }, 'A failure cause has cleared');
    }
  }

  /** Causes with failing subjects, and how many fail (for tests and status). */
  active(): Map<string, number> {
    return new Map([...this.causes].map(([cause, s]) => [cause, s.failing.size]));
  }
}
