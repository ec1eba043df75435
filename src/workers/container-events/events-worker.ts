/**
 * The container-events worker thread: one long-lived thread that holds the
 * CRI GetContainerEvents stream for the evented PLEG, behind a comlink API
 * (ContainerEventsApi). It has its own CRI client and a view of the shared
 * pod status cache, into which it writes the statuses events carry.
 */
import * as Comlink from 'comlink';
import { parentPort, workerData } from 'node:worker_threads';
import { realClock } from '../../common/clock.js';
import { CriClient } from '../../cri/client.js';
import type { WorkerInit } from '../../shared/shared-state.js';
import { PodStatusCache } from '../../shared/pod-status-cache.js';
import { nodeEndpoint } from '../../common/comlink-node.js';
import { ContainerEventWatcher, type ContainerEventBatch } from '../../container-events/event-watcher.js';
import type { ContainerEventsApi } from '../protocol/container-events-protocol.js';

const init = workerData as WorkerInit;
const cri = new CriClient({ runtimeEndpoint: init.runtimeEndpoint, timeoutMs: init.runtimeRequestTimeoutMs });
const cache = PodStatusCache.attach(init.podCache);
let watcher: ContainerEventWatcher | undefined;

const api: ContainerEventsApi = {
  watch(deliver: (batch: ContainerEventBatch) => void) {
    watcher = new ContainerEventWatcher({
      open: () => cri.getContainerEvents(),
      cache,
      now: () => realClock.now(),
      deliver: (batch) => {
        // A proxied call returns a promise; the main thread handles batches without answering.
        Promise.resolve(deliver(batch)).catch(() => undefined);
      },
    });
    return watcher.watch().finally(() => (deliver as unknown as Comlink.Remote<unknown>)[Comlink.releaseProxy]());
  },
  cancel(): void {
    watcher?.cancel();
  },
  close(): void {
    watcher?.cancel();
    cri.close();
  },
};

if (!parentPort) throw new Error('events-worker.ts runs as a worker thread');
Comlink.expose(api, nodeEndpoint(parentPort));
