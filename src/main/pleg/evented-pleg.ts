/**
 * The evented PLEG (upstream pkg/kubelet/pleg/evented.go, added in v1.26 behind
 * the EventedPLEG gate; v1.20 has only the generic PLEG), `--pleg=evented`.
 *
 * A ContainerEventSource (normally a dedicated worker thread behind comlink)
 * holds the CRI GetContainerEvents stream and writes the status each event
 * carries into the shared pod status cache; this class, on the main thread,
 * delivers the resulting lifecycle events, keeps the cache's global timestamp
 * moving and decides when to give up on the stream.
 *
 * Upstream semantics kept:
 * - while events flow, the generic relist still runs, every 300 s with a
 *   10 min health threshold (eventedPlegRelistPeriod/Threshold), as a safety
 *   net;
 * - the cache's global timestamp is set to now every 2 s
 *   (globalCacheUpdatePeriod), so a pod whose event was lost is not waited on
 *   for ever;
 * - a stream that fails forces a relist and is opened again; after 5 failures
 *   in the agent's life (eventedPlegMaxStreamRetries, never reset) the evented
 *   PLEG stops and the generic relist goes back to its own period (1 s) and
 *   threshold (3 min);
 * - healthy() fails while the event channel is full, as upstream's
 *   EventedPLEG.Healthy, in addition to the generic PLEG's check.
 * Differences: a runtime that answers Unimplemented (containerd before 1.7)
 * falls back at once, with one log line, instead of retrying 5 times; the
 * running pod and container gauges are updated by the relist only.
 */
import { runPeriodically } from '../../common/periodic.js';
import type { ContainerEventBatch, WatchOutcome } from '../../container-events/event-watcher.js';
import type { ContainerEventSource } from './container-event-source.js';
import type { GenericPleg } from './generic-pleg.js';
import type { PlegHealth, PodLifecycleEventGenerator } from './pleg.js';
import type { EventedPlegMetrics } from './pleg-metrics.js';
import { errorMessage } from '../../common/error-message.js';
import { GrpcStatus } from '../../common/rpc-error.js';

export const EVENTED_RELIST_PERIOD_MS = 300_000;
export const EVENTED_RELIST_THRESHOLD_MS = 600_000;
export const EVENTED_MAX_STREAM_RETRIES = 5;
export const GLOBAL_CACHE_UPDATE_PERIOD_MS = 2000;

export interface EventedPlegOptions {
  /**
   * The generic PLEG: its relist runs as the safety net and is the fallback;
   * its cache, clock, logger, metrics, sink and own period and threshold (restored on fallback) are shared.
   */
  generic: GenericPleg;
  source: ContainerEventSource;
  eventedMetrics: EventedPlegMetrics;
  maxStreamRetries?: number;
}

export class EventedPleg implements PodLifecycleEventGenerator {
  private inUse = false;
  private channelFull = false;
  private failures = 0;
  private loops: Promise<unknown>[] = [];
  private stopEvented: AbortController | undefined;

  private readonly s: ReturnType<GenericPleg['shared']>;

  constructor(private readonly options: Readonly<EventedPlegOptions>) {
    this.s = options.generic.shared();
  }

  /** True while events come from the stream (false after a fallback to the generic relist). */
  get eventedInUse(): boolean {
    return this.inUse;
  }

  start(signal: AbortSignal): void {
    if (this.loops.length > 0) return;
    this.inUse = true;
    this.stopEvented = new AbortController();
    const evented = AbortSignal.any([signal, this.stopEvented.signal]);
    this.options.generic.update({ relistPeriodMs: EVENTED_RELIST_PERIOD_MS, relistThresholdMs: EVENTED_RELIST_THRESHOLD_MS });
    // The stream first, then the generic loop's first relist: events between the two are not lost.
    this.loops.push(this.watchLoop(evented), this.globalCacheLoop(evented));
    this.options.generic.start(signal);
    const onAbort = () => this.options.source.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
  }

  async stopped(): Promise<void> {
    await Promise.all(this.loops);
    await this.options.generic.stopped();
    await this.options.source.close();
  }

  healthy(): PlegHealth {
    if (this.inUse && this.channelFull) {
      return { ok: false, message: 'EventedPLEG: pleg event channel capacity is full' };
    }
    return this.options.generic.healthy();
  }

  inspectionFailed(uid: string): boolean {
    return this.options.generic.inspectionFailed(uid);
  }

  releaseSlotWhenUnused(uid: string): void {
    this.options.generic.releaseSlotWhenUnused(uid);
  }

  private async watchLoop(signal: AbortSignal): Promise<void> {
    const max = this.options.maxStreamRetries ?? EVENTED_MAX_STREAM_RETRIES;
    while (!signal.aborted) {
      let connected = false;
      const outcome: WatchOutcome = await this.options.source.watch((batch) => {
        if (!connected) {
          connected = true;
          this.options.eventedMetrics.connectionSuccesses.inc();
        }
        this.deliver(batch);
      });
      if (signal.aborted || outcome.cancelled) return;
      this.options.eventedMetrics.connectionErrors.inc();
      const why = outcome.error ? outcome.error.message : 'the runtime ended the stream';
      if (outcome.error?.grpcCode === GrpcStatus.UNIMPLEMENTED) {
        this.fallBack(`the container runtime does not implement GetContainerEvents (containerd before 1.7?): ${why}`);
        return;
      }
      this.failures++;
      if (this.failures >= max) {
        this.fallBack(`the container events stream failed ${this.failures} times; last: ${why}`);
        return;
      }
      this.s.logger.debug({ err: why, attempt: this.failures }, 'Evented PLEG: Failed to get container events, retrying');
      await this.options.generic.relist(); // upstream: force a relist to catch up on what the stream missed
    }
  }

  /** upstream updateGlobalCache (wait.Until every globalCacheUpdatePeriod). */
  private globalCacheLoop(signal: AbortSignal): Promise<void> {
    const onError = (err: unknown) => this.s.logger.error({ err }, 'Evented PLEG: global cache update failed');
    return runPeriodically(
      () => {
        // Never backwards: a relist that finished later may have set a newer one.
        const now = this.s.clock.now();
        if (!(this.s.cache.getGlobalTimestamp() >= now)) this.s.cache.setGlobalTimestamp(now);
      },
      { periodMs: GLOBAL_CACHE_UPDATE_PERIOD_MS, signal, clock: this.s.clock, onError },
    );
  }

  private fallBack(reason: string): void {
    this.inUse = false;
    this.stopEvented?.abort();
    this.options.source
      .close()
      .catch((err: unknown) => this.s.logger.debug({ err: errorMessage(err) }, 'Evented PLEG: closing the event source failed'));
    this.s.logger.warn(
      `Evented PLEG is not usable: ${reason}; falling back to the generic PLEG (relist every ${this.s.relistPeriodMs / 1000}s)`,
    );
    this.options.generic.update({ relistPeriodMs: this.s.relistPeriodMs, relistThresholdMs: this.s.relistThresholdMs });
  }

  /** A batch from the source: statuses of pods without a slot first, then the events. */
  private deliver(batch: ContainerEventBatch): void {
    const { cache, logger, sink } = this.s;
    for (const status of batch.unslotted) {
      try {
        cache.write(cache.allocate(status.uid), status, { ifNotOlder: true });
      } catch (err) {
        logger.error({ pod: status.uid, err: errorMessage(err) }, 'Evented PLEG: cannot cache pod status; the next relist will');
      }
    }
    for (const uid of batch.sandboxDeleted) this.options.generic.releaseSlotWhenUnused(uid);
    for (const lag of batch.lagMs) this.options.eventedMetrics.connectionLatency.observe(Math.max(0, lag) / 1000);
    for (const e of batch.events) {
      if (sink(e)) {
        this.channelFull = false;
      } else {
        this.channelFull = true;
        this.s.metrics.discardEvents.inc();
        logger.error({ pod: e.id, event: e.type }, 'Evented PLEG: Event channel is full, discarded pod lifecycle event');
      }
    }
  }
}
