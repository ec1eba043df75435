import type { Clock } from '../../src/common/clock.js';

/** A manually stepped clock. Timers fire, in due order, only inside step(). */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(startMs = 1_700_000_000_000) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return () => this.timers.delete(id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const cancel = this.setTimer(ms, () => resolve());
      signal?.addEventListener(
        'abort',
        () => {
          cancel();
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Advances time by ms, firing due timers in order of their deadline. */
  step(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }

  pendingTimers(): number {
    return this.timers.size;
  }
}
