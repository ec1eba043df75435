/**
 * Pod statuses for the prober thread, read from the shared pod status cache.
 * The cache's uid → slot index lives with its owner (the main thread), so
 * this keeps its own: a remembered slot is checked on every read (the read
 * verifies the uid), and a miss rescans the slots, at most once per
 * `rescanMs`, so a pod without a status yet costs little.
 */
import type { Clock } from '../common/clock.js';
import type { PodStatus } from '../runtime/types.js';
import type { PodStatusCache } from '../shared/pod-status-cache.js';

export class CacheStatusSource {
  private slots = new Map<string, number>();
  private lastScan = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly cache: PodStatusCache,
    private readonly clock: Clock,
    private readonly rescanMs = 250,
  ) {}

  statusOf(uid: string): PodStatus | undefined {
    const slot = this.slots.get(uid);
    if (slot !== undefined) {
      const s = this.cache.read(slot, uid);
      if (s) return s;
      if (this.cache.uidAt(slot) === uid) return undefined; // allocated, no status yet
    }
    const now = this.clock.now();
    if (now - this.lastScan < this.rescanMs) return undefined;
    this.lastScan = now;
    this.rescan();
    const found = this.slots.get(uid);
    return found === undefined ? undefined : this.cache.read(found, uid);
  }

  private rescan(): void {
    const next = new Map<string, number>();
    for (let slot = 0; slot < this.cache.capacity; slot++) {
      const uid = this.cache.uidAt(slot);
      if (uid !== undefined) next.set(uid, slot);
    }
    this.slots = next;
  }
}
