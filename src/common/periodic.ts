/**
 * Periodic work, as upstream's wait.JitterUntil (Until, NonSlidingUntil,
 * JitterUntil): `fn` runs every `periodMs` until `signal` aborts.
 *
 * Contract:
 * - One run at a time: with `sliding` (the default, upstream Until) the
 *   period counts from the end of a run; without (NonSlidingUntil) from its
 *   start, and a run longer than the period delays the next one, never
 *   overlaps it.
 * - `jitterFactor` > 0 stretches each period by up to that fraction, at
 *   random (upstream wait.Jitter).
 * - `immediate` runs `fn` at once (upstream Until does); otherwise the first
 *   run is `firstDelayMs` after the start (default one period: a ticker).
 *   `firstDelayMs: 0` runs it on a zero timer, after the caller's start-up.
 * - `periodMs` may be a function: read afresh for each wait (a period that
 *   changes at run time, as upstream GenericPLEG.Update's).
 * - A `nudge` fired while the loop waits ends the wait: the next run starts
 *   at once. Fired during a run, the next run starts as soon as that one
 *   ends. Nudges do not pile up: one run answers all fired meanwhile.
 * - A run that throws or rejects goes to `onError` and the loop goes on; it
 *   is never fatal.
 * - Nothing is retained per run: one timer pending at a time and one abort
 *   listener for the life of the loop. On abort the pending timer is
 *   cancelled; the returned promise resolves once a run in progress has
 *   ended (it never rejects).
 */
import type { Clock } from './clock.js';

/** Ends a periodic loop's wait (see runPeriodically); one loop listens at a time. */
export class Nudge {
  private listener: (() => void) | undefined;

  fire(): void {
    this.listener?.();
  }

  /** For runPeriodically: `fn` hears every fire() until the returned function is called. */
  listen(fn: () => void): () => void {
    this.listener = fn;
    return () => {
      if (this.listener === fn) this.listener = undefined;
    };
  }
}

export interface PeriodicOptions {
  periodMs: number | (() => number);
  signal: AbortSignal;
  clock: Clock;
  /** Called with what a run threw or rejected with. */
  onError(err: unknown): void;
  sliding?: boolean;
  jitterFactor?: number;
  immediate?: boolean;
  firstDelayMs?: number;
  /** For tests: the random source of the jitter (default Math.random). */
  random?: () => number;
  nudge?: Nudge;
}

export function runPeriodically(fn: () => unknown, options: PeriodicOptions): Promise<void> {
  const sliding = options.sliding !== false;
  const random = options.random ?? Math.random;
  const base = typeof options.periodMs === 'function' ? options.periodMs : () => options.periodMs as number;
  const period = () => (options.jitterFactor ? base() * (1 + random() * options.jitterFactor) : base());
  return new Promise((resolve) => {
    if (options.signal.aborted) return resolve();
    let cancel: (() => void) | undefined;
    let running = false;
    let stopped = false;
    let nudged = false;
    const tick = () => {
      cancel = undefined;
      if (stopped) return;
      running = true;
      const startedAt = options.clock.now();
      const next = sliding ? 0 : period();
      const after = () => {
        running = false;
        if (stopped) return resolve();
        const wait = nudged ? 0 : sliding ? period() : Math.max(0, next - (options.clock.now() - startedAt));
        nudged = false;
        cancel = options.clock.setTimer(wait, tick);
      };
      let result: unknown;
      try {
        result = fn();
      } catch (err) {
        options.onError(err);
      }
      if (result instanceof Promise) {
        result.then(after, (err: unknown) => {
          options.onError(err);
          after();
        });
      } else {
        after();
      }
    };
    const unlisten = options.nudge?.listen(() => {
      if (stopped) return;
      if (running) {
        nudged = true;
      } else if (cancel) {
        cancel();
        tick();
      }
    });
    const stop = () => {
      stopped = true;
      unlisten?.();
      cancel?.();
      cancel = undefined;
      if (!running) resolve();
    };
    options.signal.addEventListener('abort', stop, { once: true });
    if (options.immediate) tick();
    else cancel = options.clock.setTimer(options.firstDelayMs ?? period(), tick);
  });
}
