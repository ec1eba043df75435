/**
 * A token-bucket rate limiter (client-go flowcontrol's semantics): `qps` tokens
 * per second refill a bucket of `burst`; `take()` waits its turn, FIFO, until a
 * token is free. qps <= 0 means unlimited (upstream's -1 on the heartbeat client).
 * `tryTake()` never waits (used where dropping beats queueing, e.g. events).
 */
import type { Clock } from './clock.js';

export class TokenBucket {
  private tokens: number;
  private last: number;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock,
  ) {
    if (qps > 0 && !(burst >= 1)) throw new RangeError(`token bucket burst must be >= 1 when qps > 0, got ${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  get unlimited(): boolean {
    return !(this.qps > 0);
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  /** Takes a token now if one is free. */
  tryTake(): boolean {
    if (this.unlimited) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Waits for a token (FIFO with other waiters). Rejects with the signal's reason when aborted. */
  take(signal?: AbortSignal): Promise<void> {
    if (this.unlimited) return Promise.resolve();
    const turn = this.tail.then(async () => {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        this.refill();
        if (this.tokens >= 1) {
          this.tokens -= 1;
          return;
        }
        await this.clock.sleep(Math.ceil(((1 - this.tokens) / this.qps) * 1000), signal);
      }
    });
    // A waiter that was aborted must not stall the ones behind it.
    this.tail = turn.catch(() => undefined);
    return turn;
  }
}
