/**
 * What the main thread calls on the container-events thread (events-worker.ts)
 * through comlink. Inline mode calls the same ContainerEventWatcher directly.
 */
import type { ContainerEventBatch, WatchOutcome } from '../../container-events/event-watcher.js';

export interface ContainerEventsApi {
  /** Opens the stream and delivers batches to `deliver` (a comlink proxy) until it ends. */
  watch(deliver: (batch: ContainerEventBatch) => void): Promise<WatchOutcome>;
  /** Ends the current watch. */
  cancel(): void;
  /** Ends the watch and closes the thread's CRI client. */
  close(): void;
}
