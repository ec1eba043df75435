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
 *   run is one period after the start (a ticker).
 * - A run that throws or rejects goes to `onError` and the loop goes on; it
 *   is never fatal.
 * - Nothing is retained per run: one timer pending at a time and one abort
 *   listener for the life of the loop. On abort the pending timer is
 *   cancelled; the returned promise resolves once a run in progress has
 *   ended (it never rejects).
 */
import type { Clock } from './clock.js';

export interface PeriodicOptions {
  periodMs: number;
  signal: AbortSignal;
  clock: Clock;
  /** Called with what a run threw or rejected with. */
  onError(err: unknown): void;
  sliding?: boolean;
  jitterFactor?: number;
  immediate?: boolean;
  /** For tests: the random source of the jitter (default Math.random). */
  random?: () => number;
}

export function runPeriodically(fn: () => unknown, o: PeriodicOptions): Promise<void> {
  const sliding = o.sliding !== false;
  const random = o.random ?? Math.random;
  const period = () => (o.jitterFactor ? o.periodMs * (1 + random() * o.jitterFactor) : o.periodMs);
  return new Promise((resolve) => {
    if (o.signal.aborted) return resolve();
    let cancel: (() => void) | undefined;
    let running = false;
    let stopped = false;
    const stop = () => {
      stopped = true;
      cancel?.();
      cancel = undefined;
      if (!running) resolve();
    };
    const tick = () => {
      cancel = undefined;
      if (stopped) return;
      running = true;
      const startedAt = o.clock.now();
      const next = sliding ? 0 : period();
      const after = () => {
        running = false;
        if (stopped) return resolve();
        cancel = o.clock.setTimer(sliding ? period() : Math.max(0, next - (o.clock.now() - startedAt)), tick);
      };
      let result: unknown;
      try {
        result = fn();
      } catch (err) {
        o.onError(err);
      }
      if (result instanceof Promise) {
        result.then(after, (err: unknown) => {
          o.onError(err);
          after();
        });
      } else {
        after();
      }
    };
    o.signal.addEventListener('abort', stop, { once: true });
    if (o.immediate) tick();
    else cancel = o.clock.setTimer(period(), tick);
  });
}
