/**
 * Wake-ups for waiters that re-check a condition: fire() resolves every
 * pending next(); sleepOrWake waits on the clock, cut short by a wake-up
 * source (the syncLoop's runtime backoff, a sync waiting for the cache).
 */
import type { Clock } from './clock.js';

export class Wakeup {
  private readonly waiters = new Set<() => void>();

  /** Resolves every pending next(). */
  fire(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Resolves at the next fire(), or when the signal aborts. */
  next(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const wake = () => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }
}

/** `ms` on the clock, ended early by `wake` (e.g. Wakeup.next) or the signal; the losing side is cancelled. */
export async function sleepOrWake(
  clock: Clock,
  ms: number,
  wake: (signal: AbortSignal) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const done = new AbortController();
  const either = AbortSignal.any([signal, done.signal]);
  await Promise.race([clock.sleep(ms, either).catch(() => undefined), wake(either)]);
  done.abort();
}
