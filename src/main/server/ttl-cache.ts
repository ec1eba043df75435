/** A map whose entries expire `ttl` ms after they were set (on the injected clock); sweeps lazily. */
import type { Clock } from '../../common/clock.js';

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private lastSweep = 0;

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    const now = this.clock.now();
    if (this.entries.size >= this.maxEntries || now - this.lastSweep > 60_000) this.sweep(now);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: now + ttlMs });
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
  }
}
