/**
 * Start-up phase 3: the syncLoop's queue, the PLEG (generic, or evented on
 * top of the generic one) and the runtime state that PLEG health feeds.
 * Built, not started: the loops phase starts them in upstream's order.
 */
import type { Registry } from 'prom-client';
import { Late } from '../../common/late.js';
import type { CriClient } from '../../cri/client.js';
import type { PlegEvent } from '../../runtime/pleg-event.js';
import type { SharedState } from '../../shared/shared-state.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import type { WorkerInit } from '../../shared/shared-state.js';
import { RuntimeState } from '../kubelet/runtime-state.js';
import { InlineContainerEventSource, WorkerContainerEventSource } from '../pleg/container-event-source.js';
import { EventedPleg } from '../pleg/evented-pleg.js';
import { GenericPleg } from '../pleg/generic-pleg.js';
import type { PodLifecycleEventGenerator } from '../pleg/pleg.js';
import { eventedPlegMetrics, plegMetrics } from '../pleg/pleg-metrics.js';
import { SyncLoopQueue } from '../sync-loop/sync-loop-queue.js';
import type { AgentContext } from './context.js';

export interface AgentPleg {
  queue: SyncLoopQueue;
  /** The relisting PLEG, also under the evented one. */
  genericPleg: GenericPleg;
  pleg: PodLifecycleEventGenerator;
  runtimeState: RuntimeState;
}

export function buildPleg(
  ctx: AgentContext,
  parts: { registry: Registry; runner: TaskRunner; shared: SharedState; workerInit: WorkerInit; cri: CriClient },
  /** Built later from the PLEG: told when the cache changes. */
  syncer: Late<{ cacheUpdated(): void }>,
): AgentPleg {
  const { config, clock, logger } = ctx;
  const queue = new SyncLoopQueue();
  const runtimeStateRef = new Late<RuntimeState>('the runtime state');
  const genericPleg = new GenericPleg({
    runner: parts.runner,
    cache: parts.shared.cache,
    records: parts.shared.records,
    clock,
    logger: logger.child({ component: 'pleg' }),
    metrics: plegMetrics(parts.registry),
    mode: config.relistMode,
    sink: (e: PlegEvent) => queue.offerPleg(e),
    // A relist can clear "PLEG is not healthy" for the syncLoop waiting on runtimeErrors().
    onRelist: () => runtimeStateRef.get().changed(),
    // Syncs waiting for a status newer than their previous sync check the cache again.
    onCacheUpdated: () => syncer.get().cacheUpdated(),
  });
  const pleg: PodLifecycleEventGenerator =
    config.pleg === 'evented'
      ? new EventedPleg({
          generic: genericPleg,
          source:
            config.workerThreads === 0
              ? new InlineContainerEventSource(parts.workerInit)
              : new WorkerContainerEventSource(parts.workerInit),
          eventedMetrics: eventedPlegMetrics(parts.registry),
        })
      : genericPleg;
  const runtimeState = runtimeStateRef.set(new RuntimeState(parts.cri, pleg, clock, logger.child({ component: 'runtime' })));
  return { queue, genericPleg, pleg, runtimeState };
}
