/**
 * The main thread's syncLoop (upstream Kubelet.syncLoop/syncLoopIteration):
 * one consumer of one typed queue (SyncLoopQueue). Config updates are
 * dispatched to the handlers by operation, PLEG events to the pod they name,
 * the 1 s sync tick and the 2 s housekeeping tick (only once all sources are
 * ready) to their handlers.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import type { Pod } from '../../api/pod.js';
import type { GenericPleg } from '../pleg/generic-pleg.js';
import type { PodConfig } from '../podconfig/pod-config.js';
import type { PodUpdate } from '../podconfig/types.js';
import { SyncLoopQueue, type SyncLoopEvent } from './sync-loop-queue.js';

export const SYNC_TICK_MS = 1000;
export const HOUSEKEEPING_PERIOD_MS = 2000;

export interface SyncLoopOptions {
  podConfig: PodConfig;
  pleg: GenericPleg;
  clock: Clock;
  logger: Logger;
  queue?: SyncLoopQueue;
}

function podNames(pods: Pod[]): string[] {
  return pods.map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name ?? ''}`);
}

export class SyncLoop {
  readonly queue: SyncLoopQueue;
  private readonly pods = new Map<string, Pod>();
  private lastIteration: number;
  private running: Promise<void> | undefined;

  constructor(private readonly o: SyncLoopOptions) {
    this.queue = o.queue ?? new SyncLoopQueue();
    this.lastIteration = o.clock.now();
  }

  start(signal: AbortSignal): void {
    if (this.running) return;
    const { clock, podConfig } = this.o;
    const cancelTimers: (() => void)[] = [];
    const every = (ms: number, fn: () => void) => {
      const arm = () => cancelTimers.push(clock.setTimer(ms, () => { fn(); if (!signal.aborted) arm(); }));
      arm();
    };
    every(SYNC_TICK_MS, () => this.queue.tick('sync'));
    every(HOUSEKEEPING_PERIOD_MS, () => this.queue.tick('housekeeping'));
    signal.addEventListener('abort', () => cancelTimers.forEach((c) => c()), { once: true });
    const pump = (async () => {
      for await (const update of podConfig.updates.iterate(signal)) this.queue.pushConfig(update);
    })();
    this.running = (async () => {
      for await (const event of this.queue.drain(signal)) {
        this.lastIteration = clock.now();
        try {
          await this.iterate(event);
        } catch (err) {
          this.o.logger.error({ err: String(err), event: event.kind }, 'syncLoop iteration failed');
        }
      }
      await pump.catch(() => undefined);
    })();
  }

  async stopped(): Promise<void> {
    await this.running;
  }

  /** upstream syncLoop health: the loop iterated recently. */
  healthy(): { ok: boolean; message: string } {
    const idle = this.o.clock.now() - this.lastIteration;
    return idle > 2 * 60 * 1000
      ? { ok: false, message: `sync loop has not iterated for ${Math.round(idle / 1000)}s` }
      : { ok: true, message: 'ok' };
  }

  /** PodList of the pods this node runs (for /pods). */
  podList(): { apiVersion: 'v1'; kind: 'PodList'; metadata: Record<string, never>; items: Pod[] } {
    return { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [...this.pods.values()] };
  }

  private async iterate(event: SyncLoopEvent): Promise<void> {
    const { logger } = this.o;
    switch (event.kind) {
      case 'config':
        return this.handleConfig(event.update);
      case 'pleg':
        if (logger.isLevelEnabled('debug')) logger.debug({ pod: event.event.id, event: event.event.type, data: event.event.data }, 'SyncLoop (PLEG): event for pod');
        return;
      case 'probe':
      case 'sync':
      case 'housekeeping':
        return;
    }
  }

  private handleConfig(u: PodUpdate): void {
    const { logger } = this.o;
    switch (u.op) {
      case 'ADD':
      case 'UPDATE':
      case 'RECONCILE':
      case 'DELETE':
        logger.info({ source: u.source, pods: podNames(u.pods) }, `SyncLoop ${u.op}`);
        for (const p of u.pods) this.pods.set(p.metadata.uid ?? '', p);
        return;
      case 'REMOVE':
        logger.info({ source: u.source, pods: podNames(u.pods) }, 'SyncLoop REMOVE');
        for (const p of u.pods) this.pods.delete(p.metadata.uid ?? '');
        return;
      case 'SET':
        logger.error({ source: u.source }, 'SyncLoop: unexpected SET (the merge emits deltas only)');
        return;
    }
  }
}
