/**
 * The evented PLEG's stream side (upstream EventedPLEG.watchEventsChannel and
 * processCRIEvents, v1.26 and later): holds one CRI GetContainerEvents stream, turns each event
 * into the pod status it carries, writes that status into the shared pod
 * status cache (only if it is not older than the cached one), and hands the
 * lifecycle events to `deliver` in batches, after their statuses are written.
 *
 * Runs in the container-events worker (events-worker.ts, behind comlink) or,
 * with --worker-threads=0, on the main thread: the same code either way.
 *
 * Cache slots are allocated by the main thread only. A pod that has no slot
 * yet (one this kubelet did not create, e.g. after a restart) has its status
 * carried in the batch (`unslotted`) for the main thread to allocate and
 * write. This side keeps a uid → slot map, checked by every write (a write to
 * a slot that was freed or reused fails and the slot is looked up again).
 */
import { ContainerEventType, type ContainerEventResponse } from '../gen/runtime/v1/api.js';
import { isSandboxDeleted, plegEventsOf, podStatusFromEvent } from '../runtime/event-status.js';
import type { PlegEvent } from '../runtime/pleg-event.js';
import type { PodStatus } from '../runtime/types.js';
import { serializeError } from '../common/error-wire.js';
import type { SerializedError } from '../common/error-wire.js';
import type { PodStatusCache } from '../shared/pod-status-cache.js';

/** An open GetContainerEvents stream (CriClient.getContainerEvents). */
export interface ContainerEventStream {
  events: AsyncIterable<ContainerEventResponse>;
  cancel(): void;
}

/** What one delivery carries, in order: statuses for the main thread to cache, then events. */
export interface ContainerEventBatch {
  /** Statuses of pods without a cache slot; the main thread allocates one and writes them before sending `events`. */
  unslotted: PodStatus[];
  /** Pods whose sandbox the runtime removed (upstream drops their cache entry). */
  sandboxDeleted: string[];
  /** Lifecycle events, in stream order. */
  events: PlegEvent[];
  /** Per event received: ms from its creation in the runtime to its status being cached here. */
  lagMs: number[];
}

/** How a watch ended. `cancelled`: by `cancel()`; otherwise the stream failed (`error`) or the runtime closed it. */
export interface WatchOutcome {
  cancelled: boolean;
  error?: SerializedError;
  received: number;
}

export interface EventWatcherOptions {
  open: () => ContainerEventStream;
  cache: PodStatusCache;
  /** Wall clock, ms (event ages are measured against the runtime's timestamps). */
  now: () => number;
  deliver: (batch: ContainerEventBatch) => void;
  /** Schedules a batch flush; default setImmediate (events that arrive together go together). */
  defer?: (fn: () => void) => void;
}

export class ContainerEventWatcher {
  private readonly slots = new Map<string, number>();
  private stream: ContainerEventStream | undefined;
  private cancelled = false;
  private batch: ContainerEventBatch = emptyBatch();
  private flushScheduled = false;

  constructor(private readonly options: Readonly<EventWatcherOptions>) {}

  /** Holds the stream until it ends; never throws. One watch at a time. */
  async watch(): Promise<WatchOutcome> {
    this.cancelled = false;
    let received = 0;
    try {
      this.stream = this.options.open();
      for await (const event of this.stream.events) {
        received++;
        await this.handle(event);
        if (this.cancelled) break;
      }
      return { cancelled: this.cancelled, received };
    } catch (err) {
      return { cancelled: this.cancelled, error: serializeError(err), received };
    } finally {
      this.stream = undefined;
      this.flush();
    }
  }

  /** Ends the current watch (its outcome says `cancelled`). */
  cancel(): void {
    this.cancelled = true;
    this.stream?.cancel();
  }

  private async handle(event: ContainerEventResponse): Promise<void> {
    const status = await podStatusFromEvent(event);
    if (!status) return; // no sandbox status: upstream ignores the event (see podStatusFromEvent)
    const b = this.batch;
    const written = this.writeStatus(status);
    b.lagMs.push(this.options.now() - status.timestamp);
    if (isSandboxDeleted(event)) b.sandboxDeleted.push(status.uid);
    // upstream: a deletion is always reported; otherwise only a status that updated the cache is.
    if (written || event.containerEventType === ContainerEventType.CONTAINER_DELETED_EVENT)
      b.events.push(...plegEventsOf(status.uid, event));
    this.scheduleFlush();
  }

  /** True when the status was written here or handed to the main thread; false when the cache holds a newer one. */
  private writeStatus(status: PodStatus): boolean {
    for (let attempt = 0; attempt < 2; attempt++) {
      let slot = this.slots.get(status.uid);
      if (slot === undefined) {
        slot = this.options.cache.slotOf(status.uid);
        if (slot === undefined) break;
        this.slots.set(status.uid, slot);
      }
      try {
        return this.options.cache.write(slot, status, { ifNotOlder: true });
      } catch {
        // The slot was freed or given to another pod (or the status does not fit): look it up again once.
        this.slots.delete(status.uid);
      }
    }
    this.batch.unslotted.push(status);
    return true;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    (this.options.defer ?? setImmediate)(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const b = this.batch;
    if (b.events.length === 0 && b.unslotted.length === 0 && b.sandboxDeleted.length === 0 && b.lagMs.length === 0) return;
    this.batch = emptyBatch();
    this.options.deliver(b);
  }
}

function emptyBatch(): ContainerEventBatch {
  return { unslotted: [], sandboxDeleted: [], events: [], lagMs: [] };
}
