/**
 * The pod workers' resync queue (upstream pkg/kubelet/util/queue WorkQueue):
 * for each UID, when it is next due for a sync. A UID is queued once; a later
 * enqueue replaces its time. getWork() returns and dequeues the due UIDs.
 */
import type { Clock } from '../../common/clock.js';

export class ResyncQueue {
  private readonly dueAt = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  enqueue(uid: string, delayMs: number): void {
    this.dueAt.set(uid, this.clock.now() + delayMs);
  }

  /** The UIDs whose time has come, dequeued (upstream GetWork). */
  getWork(now: number = this.clock.now()): string[] {
    const due: string[] = [];
    for (const [uid, at] of this.dueAt) {
      if (at <= now) {
        due.push(uid);
        this.dueAt.delete(uid);
      }
    }
    return due;
  }

  /** When the UID is next due, if queued. */
  dueAtOf(uid: string): number | undefined {
    return this.dueAt.get(uid);
  }

  forget(uid: string): void {
    this.dueAt.delete(uid);
  }
}
