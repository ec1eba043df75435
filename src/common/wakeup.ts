/**
 * Wake-ups for waiters that re-check a condition: fire() wakes every current
 * subscriber; sleepOrWake waits on the clock, cut short by a wake-up source
 * (the syncLoop's runtime backoff, a sync waiting for the cache).
 *
 * No AbortController per wait: a boot of 1000 pods makes tens of thousands of
 * these waits (each waiting sync re-checks the cache at every relist), and an
 * AbortSignal.any plus an abort with its DOMException cost ~0.45 s of the main
 * thread's CPU there (CPU profile of `npm run bench -- startup`).
 */
import type { Clock } from './clock.js';

/** Something that can wake a waiter: subscribe returns the unsubscribe. */
export interface WakeSource {
  subscribe(wake: () => void): () => void;
}

export class Wakeup implements WakeSource {
  private readonly waiters = new Set<() => void>();

  /** Calls every current subscriber once; each is then unsubscribed. */
  fire(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  subscribe(wake: () => void): () => void {
    this.waiters.add(wake);
    return () => this.waiters.delete(wake);
  }
}

/** `ms` on the clock, ended early by the source's next wake-up or the signal; the rest is cancelled. */
export function sleepOrWake(clock: Clock, ms: number, source: WakeSource, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    let settled = false;
    let cancelTimer = () => {};
    let unsubscribe = () => {};
    const done = () => {
      if (settled) return;
      settled = true;
      cancelTimer();
      unsubscribe();
      signal.removeEventListener('abort', done);
      resolve();
    };
    cancelTimer = clock.setTimer(ms, done);
    unsubscribe = source.subscribe(done);
    signal.addEventListener('abort', done, { once: true });
  });
}
