/**
 * A single-consumer async FIFO used as PodConfig's output.
 *
 * Unbounded on purpose: producers (podStorage.merge) must never block or
 * drop, and what is queued is already coalesced — at most five deltas per
 * source update, each holding only the pods that changed — so the queue's
 * size is bounded by the rate of source updates (one per watch burst or
 * check period per source), not by the number of pods. Upstream uses a
 * 50-slot channel whose send blocks the sources instead.
 *
 * Contract: `push` after `close` returns false and drops the item. Items
 * pushed before `close` are still delivered; iteration ends after them.
 * Only one iterator may be active at a time.
 */
export class UpdateQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  private closed = false;
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private iterating = false;

  /** Number of queued, undelivered items. */
  get length(): number {
    return this.items.length - this.head;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Enqueues an item; never blocks. Returns false when the queue is closed. */
  push(item: T): boolean {
    if (this.closed) return false;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w({ value: item, done: false });
      return true;
    }
    this.items.push(item);
    return true;
  }

  /** Ends iteration once queued items are drained. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const w = this.waiter;
    this.waiter = undefined;
    w?.({ value: undefined, done: true });
  }

  private take(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Resolves with the next item, or done when closed and drained or when `signal` aborts. */
  next(signal?: AbortSignal): Promise<IteratorResult<T>> {
    if (this.length > 0) return Promise.resolve({ value: this.take()!, done: false });
    if (this.closed || signal?.aborted) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter) return Promise.reject(new Error('UpdateQueue: only one consumer may wait at a time'));
    return new Promise((resolve) => {
      const onAbort = () => {
        if (this.waiter === settle) this.waiter = undefined;
        resolve({ value: undefined, done: true });
      };
      const settle = (r: IteratorResult<T>) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      this.waiter = settle;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Iterates until the queue is closed and drained, or `signal` aborts. */
  async *iterate(signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
    if (this.iterating) throw new Error('UpdateQueue: only one iterator may be active');
    this.iterating = true;
    try {
      for (;;) {
        const r = await this.next(signal);
        if (r.done) return;
        yield r.value;
      }
    } finally {
      this.iterating = false;
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.iterate();
  }
}
