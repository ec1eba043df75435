/**
 * The generic PLEG (upstream pkg/kubelet/pleg/generic.go), with the work
 * moved off the main thread: the relist loop (its timer, the lists, decode,
 * records and diff) runs in a pool worker (src/workers/relist/relist-loop.ts)
 * and pod inspection (parallel, bounded, by the ids the relist listed) runs
 * as pool tasks; this class handles each relist's report, sequences the
 * inspections, keeps the small per-pod bookkeeping, and delivers events. A
 * steady relist (nothing changed) ends in the worker, without a round trip:
 * its report here only updates gauges. A worker that dies after committing a
 * relist's records loses that relist's events (the periodic sync covers
 * them, as upstream assumes for missed events); the loop is started again on
 * a replacement worker.
 *
 * Upstream semantics kept:
 * - a failed list does not advance the relist time (health is measured from
 *   the last successful list);
 * - pods with events are inspected and their cache entries written before
 *   their events are sent; a pod whose inspection fails sends nothing now
 *   and is reinspected on the next relist, where its held events go out;
 * - the cache's global timestamp advances only after every inspection of
 *   the relist has finished;
 * - ContainerChanged events are not delivered; a full channel drops events
 *   and counts them (kubelet_pleg_discard_events).
 * `mode: 'serial'` inspects one pod at a time, as upstream does; it is the
 * same code with a concurrency limit of 1.
 */
import type { Logger } from 'pino';
import { runPeriodically } from '../../common/periodic.js';
import type { Clock } from '../../common/clock.js';
import { formatDuration } from '../../common/duration.js';
import type { PlegEvent } from '../../runtime/pleg-event.js';
import type { InspectOutcome, PodRef, RelistAck, RelistHandler, RelistReport, RelistSummary } from '../../workers/protocol/protocol.js';
import { hasRuntimeState } from '../../runtime/types.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';
import type { RelistRecordTable } from '../../shared/relist-records.js';
import { serializeError } from '../../common/error-wire.js';
import { WorkerCrashedError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { RelistLoopConnection, TaskRunner } from '../../workers/task-runner.js';
import { deserializeError } from '../../common/error-wire.js';
import { epochHiRes } from '../../common/time.js';
import { BoundedQueue } from './bounded-queue.js';
import type { PlegMetrics } from './pleg-metrics.js';
import type { PlegHealth, PodLifecycleEventGenerator } from './pleg.js';
import { untilAborted } from '../../common/until-aborted.js';

export const RELIST_PERIOD_MS = 1000;
export const RELIST_THRESHOLD_MS = 3 * 60 * 1000;
export const PLEG_CHANNEL_CAPACITY = 1000;
/** relistSoon: requests within this window share one early relist. */
export const EARLY_RELIST_DELAY_MS = 20;
/**
 * relistSoon: early relists start at least this far apart. 200 ms left the
 * agent's steady RSS ~10 MiB higher after a 250-pod start, 500 ms about half
 * of that: glibc's malloc arenas kept the freed memory, which the malloc
 * settings in bin/kubelet-ts.js now prevent. The gap was not retuned since.
 */
export const EARLY_RELIST_MIN_GAP_MS = 500;

export interface GenericPlegOptions {
  runner: TaskRunner;
  /** The owner instance (main thread) of the pod status cache. */
  cache: PodStatusCache;
  /** The relist record table (for recovery when a relist worker dies mid-write). */
  records: RelistRecordTable;
  clock: Clock;
  logger: Logger;
  metrics: PlegMetrics;
  mode?: 'parallel' | 'serial';
  /** Pods inspected at once in parallel mode. */
  inspectConcurrency?: number;
  relistPeriodMs?: number;
  relistThresholdMs?: number;
  channelCapacity?: number;
  /**
   * Where events go (the syncLoop queue's offerPleg). Must not block; returns
   * false when full. Default: this PLEG's own `events` queue.
   */
  sink?: (event: PlegEvent) => boolean;
  /** Called after each relist that reached the runtime (health may have changed: RuntimeState.changed). */
  onRelist?: () => void;
  /** Called when a relist's statuses are all in the cache and its global timestamp is set (PoolSyncer.cacheUpdated). */
  onCacheUpdated?: () => void;
}

/** A relist loop connection, with a signal aborted when its loop ends (for racing calls against the end). */
type ConnectedLoop = RelistLoopConnection & { endedSignal: AbortSignal };

interface PendingPod {
  events: PlegEvent[];
}

export class GenericPleg implements PodLifecycleEventGenerator {
  readonly events: BoundedQueue<PlegEvent>;
  /** The options with their defaults; fixed for the PLEG's life. */
  private readonly deps: Readonly<
    Required<Pick<GenericPlegOptions, 'mode' | 'inspectConcurrency' | 'channelCapacity'>> &
      Omit<GenericPlegOptions, 'relistPeriodMs' | 'relistThresholdMs'>
  >;
  /** The relist period and health threshold: update() changes them (upstream GenericPLEG.Update). */
  private readonly periods: { relistPeriodMs: number; relistThresholdMs: number };
  private readonly sink: (event: PlegEvent) => boolean;
  private readonly names = new Map<string, { name: string; namespace: string }>();
  /** Pods the last relist left out, with the reason logged. */
  private skipped = new Map<string, string>();
  private podsToReinspect = new Map<string, PendingPod>();
  /** relistSoon's state: a timer armed, an early relist running, another asked for meanwhile, when the last one started. */
  private readonly early = { armed: false, running: false, again: false, lastStart: -Infinity };
  /** Pods no longer desired whose cache slot should go once they hold no runtime state. */
  private readonly slotReleases = new Set<string>();
  private relistTime: number | undefined;
  private lastRelistStart: number | undefined;
  /** The relist loop (in a pool worker, or inline); undefined until first used and after its worker died. */
  private loop: ConnectedLoop | undefined;
  /** Set by start(): the loop runs periodically until it aborts. */
  private signal: AbortSignal | undefined;
  private running: Promise<void> | undefined;
  /** The report being handled: reports are handled one at a time, also across a loop restarted after its worker died. */
  private handling: Promise<unknown> = Promise.resolve();
  private readonly handler: RelistHandler = {
    relisted: (report) => {
      const next = this.handling.then(() => this.handleReportSafely(report));
      this.handling = next;
      return next;
    },
  };

  constructor(options: GenericPlegOptions) {
    const { relistPeriodMs = RELIST_PERIOD_MS, relistThresholdMs = RELIST_THRESHOLD_MS, ...rest } = options;
    this.deps = { mode: 'parallel', inspectConcurrency: 64, channelCapacity: PLEG_CHANNEL_CAPACITY, ...rest };
    this.periods = { relistPeriodMs, relistThresholdMs };
    this.events = new BoundedQueue(this.deps.channelCapacity);
    this.sink = options.sink ?? ((e) => this.events.offer(e));
  }

  /** What a PLEG built on this one (the evented PLEG) shares with it: the cache, clock, logger, metrics, sink and periods. */
  shared(): {
    cache: PodStatusCache;
    clock: Clock;
    logger: Logger;
    metrics: PlegMetrics;
    sink: (event: PlegEvent) => boolean;
    relistPeriodMs: number;
    relistThresholdMs: number;
  } {
    const { cache, clock, logger, metrics } = this.deps;
    const { relistPeriodMs, relistThresholdMs } = this.periods;
    return { cache, clock, logger, metrics, sink: this.sink, relistPeriodMs, relistThresholdMs };
  }

  /**
   * Relists every period until the signal aborts (upstream wait.Until: the
   * period runs after each relist ends). The loop's timer runs where the
   * relist runs; a loop whose worker dies is started again.
   */
  start(signal: AbortSignal): void {
    if (this.running) return;
    this.signal = signal;
    // One run lasts as long as its loop: a loop whose worker died is connected again after a period.
    this.running = runPeriodically(() => this.serveLoop(signal), {
      periodMs: () => this.periods.relistPeriodMs,
      signal,
      clock: this.deps.clock,
      immediate: true,
      onError: (err) => this.deps.logger.error({ err: errorMessage(err) }, 'The relist loop failed; starting it again'),
    });
  }

  /** Connects a relist loop and resolves when it has ended (stopped, or its worker died). */
  private async serveLoop(signal: AbortSignal): Promise<void> {
    const { api, ended } = this.connect();
    const stop = () => {
      api.stop().catch(() => undefined);
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      await Promise.race([api.start(this.periods.relistPeriodMs), ended]).catch(() => undefined);
      await ended;
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /**
   * upstream GenericPLEG.Update: a new relist period and health threshold (the
   * evented PLEG lengthens both, and restores them when it falls back). The
   * loop relists at once and then keeps the new period.
   */
  update(periods: { relistPeriodMs: number; relistThresholdMs: number }): void {
    this.periods.relistPeriodMs = periods.relistPeriodMs;
    this.periods.relistThresholdMs = periods.relistThresholdMs;
    const loop = this.loop;
    if (loop && this.signal) loop.api.setPeriod(periods.relistPeriodMs).catch(() => undefined);
  }

  /**
   * A pod sync created, started or killed something: relist within
   * EARLY_RELIST_DELAY_MS instead of at the next period, so what it did
   * reaches the pod's status (through the usual events, inspection and sync)
   * sooner. Requests coalesce; early relists start at least
   * EARLY_RELIST_MIN_GAP_MS apart, and one asked for while an early relist
   * runs follows it. Not upstream: its pod workers wait for the periodic
   * relist. The periodic loop keeps its own schedule.
   */
  relistSoon(): void {
    const early = this.early;
    if (!this.signal || this.signal.aborted || early.armed) return;
    if (early.running) {
      early.again = true;
      return;
    }
    early.armed = true;
    const { clock } = this.deps;
    const delay = Math.max(EARLY_RELIST_DELAY_MS, early.lastStart + EARLY_RELIST_MIN_GAP_MS - clock.now());
    const signal = this.signal;
    const onAbort = () => cancel();
    const cancel = clock.setTimer(delay, () => {
      signal.removeEventListener('abort', onAbort);
      early.armed = false;
      early.running = true;
      early.lastStart = clock.now();
      // relist() never throws (it logs a failed relist).
      this.relist()
        .then(() => {
          early.running = false;
          if (!early.again) return;
          early.again = false;
          this.relistSoon();
        })
        .catch(() => undefined);
    });
    signal.addEventListener('abort', onAbort, { once: true });
  }

  /** Resolves when the loop started by start() has stopped. */
  async stopped(): Promise<void> {
    await this.running;
  }

  /** upstream GenericPLEG.Healthy */
  healthy(): PlegHealth {
    if (this.relistTime === undefined) return { ok: false, message: 'pleg has yet to be successful' };
    const elapsed = this.deps.clock.now() - this.relistTime;
    if (elapsed > this.periods.relistThresholdMs) {
      return {
        ok: false,
        message: `pleg was last seen active ${formatDuration(elapsed)} ago; threshold is ${formatDuration(this.periods.relistThresholdMs)}`,
      };
    }
    return { ok: true, message: 'ok' };
  }

  /**
   * Asks for the pod's cache slot to be freed at the end of a relist (when no
   * inspection can be writing it) if the pod then has no runtime state. Pods
   * that still have containers are freed when an inspection finds them gone.
   */
  releaseSlotWhenUnused(uid: string): void {
    this.slotReleases.add(uid);
  }

  private releaseUnusedSlots(): void {
    const { cache } = this.deps;
    for (const uid of this.slotReleases) {
      this.slotReleases.delete(uid);
      const slot = cache.slotOf(uid);
      if (slot === undefined || this.podsToReinspect.has(uid)) continue;
      const status = cache.read(slot, uid);
      if (!status || !hasRuntimeState(status)) cache.free(uid);
    }
  }

  /** True while the pod's last inspection failed: its cache entry must not be trusted. */
  inspectionFailed(uid: string): boolean {
    return this.podsToReinspect.has(uid);
  }

  /** The time of the last successful list, ms (undefined before the first). */
  lastRelistTime(): number | undefined {
    return this.relistTime;
  }

  /** The relist loop, started on first use; a loop whose worker died is recovered from here. */
  private connect(): ConnectedLoop {
    if (this.loop) return this.loop;
    const conn = this.deps.runner.relistLoop();
    const end = new AbortController();
    const loop = { ...conn, endedSignal: end.signal };
    this.loop = loop;
    conn.api.attach(this.handler).catch(() => undefined);
    conn.ended
      .then((err) => {
        end.abort();
        if (this.loop === loop) this.loop = undefined;
        if (!err) return;
        // Its writes may have stopped mid-generation.
        if (err instanceof WorkerCrashedError) {
          this.deps.records.recoverAfterWriterCrash();
          this.deps.cache.recoverGlobalAfterWriterCrash();
        }
        this.deps.logger.error({ err: errorMessage(err) }, 'GenericPLEG: Unable to retrieve pods');
      })
      .catch(() => undefined);
    return loop;
  }

  /**
   * One relist now: list, diff, inspect, publish. Never throws. A call while a
   * relist runs waits for it and then relists again (upstream's Relist holds
   * a lock), so a forced relist always lists after it was asked for.
   */
  async relist(): Promise<void> {
    // Raced against the loop's end through its signal, whose listener goes with the call (racing the
    // long-lived `ended` promise itself would keep one reaction per call until the loop ends).
    const { api, endedSignal } = this.connect();
    await untilAborted(api.relistNow(), endedSignal).catch((err: unknown) => {
      // A loop that ended (its worker died) is logged where that is noticed, in connect().
      if (!endedSignal.aborted) this.deps.logger.error({ err: errorMessage(err) }, 'GenericPLEG: Unable to retrieve pods');
    });
  }

  /** handleReport, whose failure is logged here and makes the loop bring its next relist to the main thread. */
  private async handleReportSafely(report: RelistReport): Promise<RelistAck> {
    try {
      return await this.handleReport(report);
    } catch (err) {
      this.deps.logger.error({ err: errorMessage(err) }, 'GenericPLEG: relist failed; the next relist retries it');
      return { busy: true };
    }
  }

  /** The main thread's part of one relist: health, gauges, and for a relist with news, inspection and events. */
  private async handleReport(report: RelistReport): Promise<RelistAck> {
    const { metrics, logger } = this.deps;
    const received = epochHiRes();
    const { timestamp, summary } = report;
    if (this.lastRelistStart !== undefined) metrics.relistInterval.observe((timestamp - this.lastRelistStart) / 1000);
    this.lastRelistStart = timestamp;
    if (!summary) {
      logger.error({ err: String(deserializeError(report.error!)) }, 'GenericPLEG: Unable to retrieve pods');
      metrics.relistDuration.observe(report.workerMs / 1000);
      return { busy: this.podsToReinspect.size > 0 };
    }
    const phase = metrics.relistPhase;
    phase.observe({ phase: 'list' }, summary.timings.listMs / 1000);
    phase.observe({ phase: 'records' }, summary.timings.recordsMs / 1000);
    phase.observe({ phase: 'diff' }, summary.timings.diffMs / 1000);
    phase.observe({ phase: 'dispatch' }, Math.max(0, received - report.endedAt) / 1000);
    this.relistTime = timestamp;
    this.deps.onRelist?.();
    metrics.lastSeen.set(timestamp / 1000);
    metrics.runningPods.set(summary.runningPods);
    for (const [state, n] of Object.entries(summary.containersByState)) metrics.runningContainers.set({ container_state: state }, n);
    this.noteSkipped(summary.skipped);
    // A quiet relist ended in the loop's thread, which set the cache's global timestamp. Pods held for
    // reinspection make any relist a main-thread one (a loop restarted after its worker died has not been told).
    if (report.quiet && this.podsToReinspect.size === 0) {
      this.deps.onCacheUpdated?.();
      this.releaseUnusedSlots();
      metrics.relistDuration.observe(report.workerMs / 1000);
      metrics.relistPhase.observe({ phase: 'main' }, (epochHiRes() - received) / 1000);
      return { busy: false };
    }
    for (const p of summary.newPods) this.names.set(p.uid, { name: p.name, namespace: p.namespace });
    const byPod = new Map<string, PlegEvent[]>();
    for (const e of summary.events) {
      let list = byPod.get(e.id);
      if (!list) byPod.set(e.id, (list = []));
      list.push(e);
    }
    // Pods that failed inspection last time: retry them with their held events.
    for (const [uid, pending] of this.podsToReinspect) byPod.set(uid, [...pending.events, ...(byPod.get(uid) ?? [])]);
    const needsReinspection = new Map<string, PendingPod>();
    const tInspectStart = epochHiRes();
    await this.inspectAndPublish(byPod, summary.known, timestamp, needsReinspection);
    const tInspectEnd = epochHiRes();
    if (byPod.size > 0) metrics.relistPhase.observe({ phase: 'inspect' }, (tInspectEnd - tInspectStart) / 1000);
    this.podsToReinspect = needsReinspection;
    this.deps.cache.setGlobalTimestamp(timestamp);
    this.deps.onCacheUpdated?.();
    this.releaseUnusedSlots();
    const end = epochHiRes();
    metrics.relistPhase.observe({ phase: 'main' }, (end - received - (tInspectEnd - tInspectStart)) / 1000);
    metrics.relistDuration.observe((end - report.startedAt) / 1000);
    return { busy: this.podsToReinspect.size > 0 };
  }

  /** Logs a pod the relist left out when it first is (or its reason changes), and when it is recorded again. */
  private noteSkipped(skipped: RelistSummary['skipped']): void {
    const { logger, metrics } = this.deps;
    const now = new Map<string, string>();
    for (const p of skipped) {
      now.set(p.uid, p.reason);
      if (this.skipped.get(p.uid) === p.reason) continue;
      logger.error(
        { pod: `${p.namespace}/${p.name}`, podUID: p.uid, err: p.reason },
        "GenericPLEG: pod left out of the relist: its containers' changes are not seen until it fits",
      );
    }
    for (const uid of this.skipped.keys()) {
      if (!now.has(uid)) logger.info({ podUID: uid }, 'GenericPLEG: pod recorded by the relist again');
    }
    this.skipped = now;
    metrics.skippedPods.set(now.size);
  }

  private async inspectAndPublish(
    byPod: Map<string, PlegEvent[]>,
    known: RelistSummary['known'],
    listedAt: number,
    needsReinspection: Map<string, PendingPod>,
  ): Promise<void> {
    const { cache, logger } = this.deps;
    const refs: PodRef[] = [];
    for (const [uid, events] of byPod) {
      const names = this.names.get(uid) ?? { name: '', namespace: '' };
      let slot: number;
      try {
        slot = cache.allocate(uid);
      } catch (err) {
        logger.error({ pod: uid, err: errorMessage(err) }, 'GenericPLEG: cannot cache pod status; will retry');
        needsReinspection.set(uid, { events });
        continue;
      }
      const keys = [...new Set(events.map((e) => e.data))];
      const ids = known[uid];
      refs.push({ uid, name: names.name, namespace: names.namespace, slot, keys, ...(ids ? { known: ids, listedAt } : {}) });
    }
    const serial = this.deps.mode === 'serial';
    const concurrency = serial ? 1 : Math.max(1, this.deps.inspectConcurrency);
    const batchSize = serial ? 1 : Math.max(1, Math.min(16, Math.ceil(refs.length / Math.max(2, 2 * this.deps.runner.threads))));
    const batches: PodRef[][] = [];
    for (let i = 0; i < refs.length; i += batchSize) batches.push(refs.slice(i, i + batchSize));
    let next = 0;
    const lane = async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        let outcomes: InspectOutcome[];
        try {
          outcomes = (await this.deps.runner.run({ type: 'inspect', pods: batch })).outcomes;
        } catch (err) {
          // Only a dead worker rejects (tasks report their own errors); its
          // writes may have stopped mid-slot.
          for (const p of batch) cache.recoverSlotAfterWriterCrash(p.slot);
          outcomes = batch.map((p) => ({ uid: p.uid, error: serializeError(err) }));
        }
        for (const out of outcomes) {
          const events = byPod.get(out.uid) ?? [];
          if (out.error) {
            logger.error({ pod: out.uid, err: out.error.message }, 'PLEG: Ignoring events for pod');
            needsReinspection.set(out.uid, { events });
            continue;
          }
          if (out.empty) {
            cache.free(out.uid);
            this.names.delete(out.uid);
          }
          this.publish(events, out.ids);
        }
      }
    };
    const lanes = Math.max(1, Math.ceil(concurrency / batchSize));
    await Promise.all(Array.from({ length: Math.min(lanes, batches.length) }, lane));
  }

  private publish(events: PlegEvent[], ids: Record<string, string> | undefined): void {
    for (const e of events) {
      if (e.type === 'ContainerChanged') continue;
      const full = ids?.[e.data];
      if (!this.sink(full ? { ...e, data: full } : e)) {
        this.deps.metrics.discardEvents.inc();
      }
    }
  }
}
