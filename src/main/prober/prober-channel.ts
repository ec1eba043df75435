/**
 * How the main thread reaches the prober host: on its own worker thread
 * (`ThreadProber`, the normal case), or on the main thread itself
 * (`InlineProber`, --worker-threads=0, the same ProberHost code). Both take
 * commands without waiting and deliver result batches to `onBatch`.
 */
import * as Comlink from 'comlink';
import type { Worker } from 'node:worker_threads';
import type { Clock } from '../../common/clock.js';
import { CriClient } from '../../cri/client.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';
import { ProberHost, type ProberBatch } from '../../prober/prober-host.js';
import type { ProberInit, ProberThreadApi } from '../../workers/protocol/prober-protocol.js';
import { nodeEndpoint } from '../../common/comlink-node.js';
import { startThread } from '../../workers/start-thread.js';
import type { ProbePod, ProbeType } from '../../prober/probe-types.js';
import { runProbe } from '../../prober/run-probe.js';

/** The prober thread's API (results go to the callback given at construction), and close(). */
export interface ProberChannel extends Omit<ProberThreadApi, 'attach'> {
  close(): Promise<void>;
}

/** The prober on its own thread, behind comlink. */
export class ThreadProber implements ProberChannel {
  private readonly worker: Worker;
  private readonly remote: Comlink.Remote<ProberThreadApi>;
  private closed: Promise<void> | undefined;
  /** Resolves when the thread has exited: a pending metricsText() then answers ''. */
  private readonly exited: Promise<void>;

  constructor(init: ProberInit, onBatch: (batch: ProberBatch) => void, onExit: (err: Error | undefined) => void) {
    this.worker = startThread('prober', init);
    this.remote = Comlink.wrap<ProberThreadApi>(nodeEndpoint(this.worker));
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('error', (err) => onExit(err));
    this.worker.on('exit', (code) => {
      if (!this.closed) onExit(new Error(`the prober thread exited with code ${code}`));
    });
    this.call((r) => r.attach(Comlink.proxy(onBatch)));
  }

  /** A fire-and-forget call; comlink delivers calls in order. Nothing is sent once closed. */
  private call(fn: (remote: Comlink.Remote<ProberThreadApi>) => Promise<unknown>): void {
    if (!this.closed) fn(this.remote).catch(() => undefined);
  }

  addPod(pod: ProbePod): void {
    this.call((r) => r.addPod(pod));
  }
  stopLivenessAndStartup(uid: string): void {
    this.call((r) => r.stopLivenessAndStartup(uid));
  }
  removePod(uid: string): void {
    this.call((r) => r.removePod(uid));
  }
  cleanupPods(uids: string[]): void {
    this.call((r) => r.cleanupPods(uids));
  }
  trigger(uid: string, container: string, probeType: ProbeType): void {
    this.call((r) => r.trigger(uid, container, probeType));
  }

  async metricsText(): Promise<string> {
    if (this.closed) return '';
    return Promise.race([this.remote.metricsText(), this.exited.then(() => '')]).catch(() => '');
  }

  /** Ends the thread (its probes in flight are abandoned); gives up waiting after 5 s so shutdown cannot hang on it. */
  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 5000);
      t.unref();
      const done = () => {
        clearTimeout(t);
        resolve();
      };
      this.remote[Comlink.releaseProxy]();
      this.worker.terminate().then(done, done);
    });
    return this.closed;
  }
}

export interface InlineProberOptions {
  runtimeEndpoint: string;
  runtimeRequestTimeoutMs: number;
  cache: PodStatusCache;
  nodeIP: string;
  clock: Clock;
}

export class InlineProber implements ProberChannel {
  private readonly host: ProberHost;
  private readonly cri: CriClient;

  constructor(options: InlineProberOptions, onBatch: (batch: ProberBatch) => void) {
    this.cri = new CriClient({ runtimeEndpoint: options.runtimeEndpoint, timeoutMs: options.runtimeRequestTimeoutMs });
    const runCtx = { cri: this.cri, clock: options.clock, runtimeRequestTimeoutMs: options.runtimeRequestTimeoutMs };
    this.host = new ProberHost({
      clock: options.clock,
      nodeIP: options.nodeIP,
      statusOf: (uid) => {
        const slot = options.cache.slotOf(uid);
        return slot === undefined ? undefined : options.cache.read(slot, uid);
      },
      probe: (type, spec, target) => runProbe(runCtx, type, spec, target),
      emit: onBatch,
    });
  }

  addPod(pod: ProbePod): void {
    this.host.addPod(pod);
  }
  stopLivenessAndStartup(uid: string): void {
    this.host.stopLivenessAndStartup(uid);
  }
  removePod(uid: string): void {
    this.host.removePod(uid);
  }
  cleanupPods(uids: string[]): void {
    this.host.cleanupPods(uids);
  }
  trigger(uid: string, container: string, probeType: ProbeType): void {
    this.host.trigger(uid, container, probeType);
  }
  metricsText(): Promise<string> {
    return this.host.registry.metrics();
  }
  async close(): Promise<void> {
    this.host.close();
    this.cri.close();
  }
}
