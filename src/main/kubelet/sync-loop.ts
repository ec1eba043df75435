/**
 * The main thread's syncLoop (upstream Kubelet.syncLoop/syncLoopIteration):
 * one consumer of one typed queue (SyncLoopQueue). Config updates go to the
 * handlers by operation, PLEG events to the pod they name, the 1 s sync tick
 * syncs pods whose resync or error backoff is due, and the 2 s housekeeping
 * tick runs HandlePodCleanups once all sources are ready. While the runtime
 * is unhealthy the loop does no work and backs off 100 ms → 5 s, logging
 * "Skipping pod synchronization" at each skip as upstream.
 *
 * Start-up: the first runtime Status check and the first PLEG relist start
 * beside the loop. Upstream's first iterations skip (and log at error level)
 * until they land, a few hundred milliseconds into every start; this loop
 * waits for them first, for at most STARTUP_WAIT_MS, so a healthy start logs
 * no error. A runtime still unhealthy after that wait is skipped and logged
 * as upstream.
 */
import { runPeriodically } from '../../common/periodic.js';
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { sleepOrWake } from '../../common/wakeup.js';
import type { Pod, PodStatus } from '../../api/pod.js';
import type { PodHandlers } from './handlers.js';
import type { PodManager } from '../podconfig/pod-manager.js';
import type { RuntimeState } from './runtime-state.js';
import type { PodWorkers } from '../pod-workers/pod-workers.js';
import type { PodConfig } from '../podconfig/pod-config.js';
import type { PodUpdate } from '../podconfig/types.js';
import type { StatusManager } from '../status/status-manager.js';
import { SyncLoopQueue, type SyncLoopEvent } from '../sync-loop/sync-loop-queue.js';
import { errorMessage } from '../../common/error-message.js';
import { v, vEnabled } from '../../common/logger.js';
import type { PlegEvent } from '../../runtime/pleg-event.js';

export const SYNC_TICK_MS = 1000;
export const HOUSEKEEPING_PERIOD_MS = 2000;
export const RUNTIME_BACKOFF_MIN_MS = 100;
export const RUNTIME_BACKOFF_MAX_MS = 5000;
/** How long the first iteration waits for the first Status check and relist before skipping (and logging) as upstream. */
export const STARTUP_WAIT_MS = 10_000;
/** The syncLoop health threshold never goes below this (upstream syncLoopHealthCheck). */
export const MIN_SYNC_LOOP_HEALTH_THRESHOLD_MS = 5 * 60 * 1000;

export interface SyncLoopOptions {
  podConfig: PodConfig;
  handlers: PodHandlers;
  podWorkers: PodWorkers;
  podManager: PodManager;
  statusManager: StatusManager;
  runtimeState: RuntimeState;
  clock: Clock;
  logger: Logger;
  queue?: SyncLoopQueue;
  /** syncFrequency (ms): the health threshold is max(2 × this, 5 min). Default 1 min. */
  syncFrequencyMs?: number;
}

function podNames(pods: Pod[]): string[] {
  return pods.map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name ?? ''}`);
}

export class SyncLoop {
  readonly queue: SyncLoopQueue;
  /** When the loop last entered or left an iteration (upstream syncLoopMonitor); undefined before the first. */
  private lastIteration: number | undefined;
  private running: Promise<void> | undefined;
  /** podList's item of each pod, for the status it was made with. */
  private readonly listItems = new WeakMap<Pod, { status: PodStatus | undefined; item: Pod }>();
  /** Sources whose updates the loop has handled (upstream kl.sourcesReady.AddSource). */
  private readonly seenSources = new Set<string>();

  constructor(private readonly options: Readonly<SyncLoopOptions>) {
    this.queue = options.queue ?? new SyncLoopQueue();
  }

  start(signal: AbortSignal): void {
    if (this.running) return;
    const { clock, podConfig } = this.options;
    // upstream's syncTicker and housekeepingTicker.
    const onError = (err: unknown) => this.options.logger.error({ err: errorMessage(err) }, 'syncLoop tick failed');
    const tickers = Promise.all([
      runPeriodically(() => this.queue.tick('sync'), { periodMs: SYNC_TICK_MS, sliding: false, signal, clock, onError }),
      runPeriodically(() => this.queue.tick('housekeeping'), { periodMs: HOUSEKEEPING_PERIOD_MS, sliding: false, signal, clock, onError }),
    ]);
    const pump = (async () => {
      for await (const update of podConfig.updates.iterate(signal)) this.queue.pushConfig(update);
    })();
    this.running = (async () => {
      await this.waitForFirstChecks(signal);
      let backoff = RUNTIME_BACKOFF_MIN_MS;
      while (!signal.aborted) {
        const errs = this.options.runtimeState.runtimeErrors();
        if (errs.length > 0) {
          // upstream: while the runtime is unhealthy, skip iterations (nothing is consumed) with backoff.
          this.options.logger.error({ err: errs.join('; '), retryInMs: backoff }, 'Skipping pod synchronization');
          // Cut short when the runtime state may have changed.
          await sleepOrWake(clock, backoff, this.options.runtimeState.changes, signal);
          backoff = Math.min(backoff * 2, RUNTIME_BACKOFF_MAX_MS);
          continue;
        }
        backoff = RUNTIME_BACKOFF_MIN_MS;
        // Only iterations that run count for health: skipping for runtime errors is not progress.
        this.lastIteration = clock.now();
        const event = await this.queue.take(signal);
        if (!event) break;
        try {
          this.iterate(event);
        } catch (err) {
          this.options.logger.error({ err: errorMessage(err), event: event.kind }, 'syncLoop iteration failed');
        }
        this.lastIteration = clock.now();
      }
      await pump.catch(() => undefined);
      await tickers;
    })();
  }

  async stopped(): Promise<void> {
    await this.running;
  }

  /**
   * Upstream kl.sourcesReady.AllReady(): every registered source has
   * delivered, and this loop has handled an update of each (so the pod
   * manager holds what they delivered).
   */
  sourcesReady(): boolean {
    return this.options.podConfig.seenAllSources(this.seenSources);
  }

  /** Waits, without logging, until the runtime has no errors, for at most STARTUP_WAIT_MS. */
  private async waitForFirstChecks(signal: AbortSignal): Promise<void> {
    const { clock, runtimeState } = this.options;
    const deadline = clock.now() + STARTUP_WAIT_MS;
    while (!signal.aborted && runtimeState.runtimeErrors().length > 0) {
      const left = deadline - clock.now();
      if (left <= 0) return;
      await sleepOrWake(clock, left, runtimeState.changes, signal);
    }
  }

  /**
   * Upstream syncLoopHealthCheck: unhealthy once the last iteration is older
   * than max(2 × syncFrequency, 5 min); healthy before the first iteration.
   */
  healthy(): { ok: boolean; message: string } {
    if (this.lastIteration === undefined) return { ok: true, message: 'ok' };
    const threshold = Math.max(2 * (this.options.syncFrequencyMs ?? 60_000), MIN_SYNC_LOOP_HEALTH_THRESHOLD_MS);
    const idle = this.options.clock.now() - this.lastIteration;
    return idle > threshold ? { ok: false, message: 'sync Loop took longer than expected' } : { ok: true, message: 'ok' };
  }

  /**
   * PodList of the pods this node runs, with the status the kubelet computed
   * (for /pods). An item is the same object while neither its pod nor its
   * status changes (both are replaced, never changed in place), so the
   * server can reuse its JSON (json-list.ts); callers must not change items.
   */
  podList(): { apiVersion: 'v1'; kind: 'PodList'; metadata: Record<string, never>; items: Pod[] } {
    const items = this.options.podManager.pods().map((p) => {
      const status = this.options.statusManager.getPodStatus(p.metadata.uid ?? '');
      const known = this.listItems.get(p);
      if (known && known.status === status) return known.item;
      const item = { ...p, status: status ?? p.status ?? {} };
      this.listItems.set(p, { status, item });
      return item;
    });
    return { apiVersion: 'v1', kind: 'PodList', metadata: {}, items };
  }

  private iterate(event: SyncLoopEvent): void {
    const { handlers, logger } = this.options;
    switch (event.kind) {
      case 'config':
        return this.handleConfig(event.update);
      case 'pleg':
        this.logPlegEvent(event.event);
        return handlers.handlePlegEvent(event.event);
      case 'probe':
        // upstream handleProbeSync: a readiness or startup change, or a liveness failure, syncs the pod
        // (its status is regenerated with the new results; SyncPod restarts a failed container).
        return handlers.handlePodSyncs([event.result.podUid]);
      case 'sync':
        return handlers.handlePodSyncs(handlers.podsToSync(this.options.podWorkers.dueForResync()));
      case 'housekeeping':
        if (!this.sourcesReady()) {
          if (logger.isLevelEnabled('debug')) logger.debug('SyncLoop (housekeeping, skipped): sources aren’t ready yet');
          return;
        }
        return handlers.handlePodCleanups();
    }
  }

  /** upstream: a sync-worthy PLEG event of a known pod at V(2), of an unknown one ("irrelevant") at V(4). */
  private logPlegEvent(e: PlegEvent): void {
    const { logger, podManager } = this.options;
    if (e.type === 'ContainerRemoved' || !vEnabled(logger, 2)) return;
    const pod = podManager.get(e.id);
    if (pod) v(logger, 2).info({ pod: podNames([pod])[0], event: e.type, data: e.data }, 'SyncLoop (PLEG): event for pod');
    else if (vEnabled(logger, 4)) logger.debug({ pod: e.id, event: e.type, data: e.data }, 'SyncLoop (PLEG): ignore irrelevant event');
  }

  private handleConfig(u: PodUpdate): void {
    const { handlers, logger } = this.options;
    this.seenSources.add(u.source);
    // upstream logs each update at V(2), a RECONCILE at V(4)
    const level = u.op === 'RECONCILE' ? 4 : 2;
    if (vEnabled(logger, level)) v(logger, level).info({ source: u.source, pods: podNames(u.pods) }, `SyncLoop ${u.op}`);
    switch (u.op) {
      case 'ADD':
        return handlers.handlePodAdditions(u.pods);
      case 'UPDATE':
      case 'DELETE':
        return handlers.handlePodUpdates(u.pods);
      case 'REMOVE':
        return handlers.handlePodRemoves(u.pods);
      case 'RECONCILE':
        return handlers.handlePodReconcile(u.pods);
      case 'SET':
        logger.error({ source: u.source }, 'SyncLoop: unexpected SET (the merge emits deltas only)');
        return;
    }
  }
}
