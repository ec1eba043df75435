/**
 * A bounded FIFO with one consumer. Producers never block: `offer` returns
 * false when the queue is full and the caller counts the drop (upstream PLEG
 * drops events on a full channel; the periodic sync is the safety net).
 */
export class BoundedQueue<T> {
  private readonly items: (T | undefined)[];
  private head = 0;
  private count = 0;
  private waiter: ((v: void) => void) | undefined;
  private closed = false;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`queue capacity must be >= 1, got ${capacity}`);
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.count;
  }

  /** Enqueues unless full or closed; never blocks. */
  offer(item: T): boolean {
    if (this.closed || this.count === this.capacity) return false;
    this.items[(this.head + this.count) % this.capacity] = item;
    this.count++;
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
    return true;
  }

  /** Dequeues without waiting. */
  poll(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    return item;
  }

  /** Dequeues up to max items without waiting. */
  drain(max = Number.POSITIVE_INFINITY): T[] {
    const out: T[] = [];
    while (this.count > 0 && out.length < max) out.push(this.poll() as T);
    return out;
  }

  /** Waits for an item; resolves undefined when closed or aborted. Single consumer. */
  async take(signal?: AbortSignal): Promise<T | undefined> {
    for (;;) {
      if (this.count > 0) return this.poll();
      if (this.closed || signal?.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        this.waiter = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  close(): void {
    this.closed = true;
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}
