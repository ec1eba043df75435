/**
 * Where the evented PLEG gets container events from. The seam: an interface,
 * the worker implementation (a dedicated thread behind comlink, the normal
 * case) and the inline one (--worker-threads=0: the same watcher on the main
 * thread). Tests use test/fakes/fake-container-event-source.ts.
 */
import type { Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { realClock } from '../../common/clock.js';
import { CriClient } from '../../cri/client.js';
import { serializeError } from '../../common/error-wire.js';
import { startThread } from '../../workers/start-thread.js';
import type { WorkerInit } from '../../shared/shared-state.js';
import { PodStatusCache } from '../../shared/pod-status-cache.js';
import { nodeEndpoint } from '../../common/comlink-node.js';
import { ContainerEventWatcher, type ContainerEventBatch, type WatchOutcome } from '../../container-events/event-watcher.js';
import type { ContainerEventsApi } from '../../workers/protocol/container-events-protocol.js';

export interface ContainerEventSource {
  /**
   * Opens a GetContainerEvents stream and delivers batches (statuses already
   * cached, see ContainerEventBatch) until the stream ends. Never rejects:
   * the outcome says why it ended. One watch at a time.
   */
  watch(deliver: (batch: ContainerEventBatch) => void): Promise<WatchOutcome>;
  /** Ends the current watch. */
  cancel(): void;
  /** Ends any watch and releases the thread and the CRI channel. */
  close(): Promise<void>;
}

/** The same watcher on the calling thread (inline mode). */
export class InlineContainerEventSource implements ContainerEventSource {
  private readonly cri: CriClient;
  private readonly cache: PodStatusCache;
  private watcher: ContainerEventWatcher | undefined;

  constructor(init: WorkerInit) {
    this.cri = new CriClient({ runtimeEndpoint: init.runtimeEndpoint, timeoutMs: init.runtimeRequestTimeoutMs });
    this.cache = PodStatusCache.attach(init.podCache);
  }

  watch(deliver: (batch: ContainerEventBatch) => void): Promise<WatchOutcome> {
    this.watcher = new ContainerEventWatcher({
      open: () => this.cri.getContainerEvents(),
      cache: this.cache,
      now: () => realClock.now(),
      deliver,
    });
    return this.watcher.watch();
  }

  cancel(): void {
    this.watcher?.cancel();
  }

  async close(): Promise<void> {
    this.cancel();
    this.cri.close();
  }
}

/**
 * The container-events worker thread behind comlink. The thread starts on the
 * first watch and is started again after it dies (a dead thread ends the
 * watch with an error, which the evented PLEG counts as a stream failure).
 */
export class WorkerContainerEventSource implements ContainerEventSource {
  private worker: Worker | undefined;
  private remote: Comlink.Remote<ContainerEventsApi> | undefined;
  private exited: Promise<Error> | undefined;

  constructor(private readonly init: WorkerInit) {}

  private ensureWorker(): { remote: Comlink.Remote<ContainerEventsApi>; exited: Promise<Error> } {
    if (this.worker && this.remote && this.exited) return { remote: this.remote, exited: this.exited };
    const worker = startThread('containerEvents', this.init);
    const exited = new Promise<Error>((resolve) => {
      worker.once('error', (err) => resolve(err));
      worker.once('exit', (code) => resolve(new Error(`the container-events worker thread exited (code ${code})`)));
    });
    exited
      .then(() => {
        if (this.worker !== worker) return;
        this.remote?.[Comlink.releaseProxy]();
        this.worker = undefined;
        this.remote = undefined;
        this.exited = undefined;
      })
      .catch(() => undefined);
    this.worker = worker;
    this.remote = Comlink.wrap<ContainerEventsApi>(nodeEndpoint(worker));
    this.exited = exited;
    return { remote: this.remote, exited };
  }

  async watch(deliver: (batch: ContainerEventBatch) => void): Promise<WatchOutcome> {
    const { remote, exited } = this.ensureWorker();
    const died = exited.then((err): WatchOutcome => ({ cancelled: false, error: serializeError(err), received: 0 }));
    try {
      return await Promise.race([remote.watch(Comlink.proxy(deliver)), died]);
    } catch (err) {
      return { cancelled: false, error: serializeError(err), received: 0 };
    }
  }

  cancel(): void {
    this.remote?.cancel().catch(() => undefined);
  }

  async close(): Promise<void> {
    const { worker, remote } = this;
    this.worker = undefined;
    this.remote = undefined;
    this.exited = undefined;
    if (!worker || !remote) return;
    await remote.close().catch(() => undefined);
    remote[Comlink.releaseProxy]();
    await worker.terminate();
  }
}
