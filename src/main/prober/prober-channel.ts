/**
 * How the main thread reaches the prober host: on its own worker thread
 * (`ThreadProber`, the normal case), or on the main thread itself
 * (`InlineProber`, --worker-threads=0, the same ProberHost code). Both take
 * commands without waiting and deliver result batches to `onBatch`.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../../common/clock.js';
import { CriClient } from '../../cri/client.js';
import type { PodStatusCache } from '../../workers/shared/pod-status-cache.js';
import { ProberHost, type ProberBatch } from '../../workers/prober/prober-host.js';
import type { ProberCommand, ProberInit, ProberMessage } from '../../workers/prober/prober-protocol.js';
import type { ProbePod, ProbeType } from '../../workers/prober/probe-types.js';
import { runProbe } from '../../workers/prober/run-probe.js';
import { WORKER_RESOURCE_LIMITS } from '../../workers/worker-limits.js';

export interface ProberChannel {
  addPod(pod: ProbePod): void;
  stopLivenessAndStartup(uid: string): void;
  removePod(uid: string): void;
  cleanupPods(uids: string[]): void;
  trigger(uid: string, container: string, probeType: ProbeType): void;
  /** prober_probe_total and prober_probe_duration_seconds in the text exposition format. */
  metricsText(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The prober thread from dist (.js), or under tsx/vitest from the .ts source
 * through the CommonJS boot file (see src/workers/ts-worker-boot.cjs).
 */
function startWorker(init: ProberInit): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('../../workers/prober/prober-thread-entry.js', import.meta.url), {
      workerData: init,
      resourceLimits: WORKER_RESOURCE_LIMITS,
    });
  }
  const entry = fileURLToPath(new URL('../../workers/prober/prober-thread-entry.ts', import.meta.url));
  return new Worker(new URL('../../workers/ts-worker-boot.cjs', import.meta.url), {
    workerData: { ...init, __entry: entry },
    execArgv: ['--import', 'tsx'],
    resourceLimits: WORKER_RESOURCE_LIMITS,
  });
}

export class ThreadProber implements ProberChannel {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, (text: string) => void>();
  private closed: Promise<void> | undefined;

  constructor(init: ProberInit, onBatch: (batch: ProberBatch) => void, onExit: (err: Error | undefined) => void) {
    this.worker = startWorker(init);
    this.worker.on('message', (m: ProberMessage) => {
      if (m.type === 'batch') onBatch(m.batch);
      else if (m.type === 'metrics') {
        this.waiting.get(m.id)?.(m.text);
        this.waiting.delete(m.id);
      }
    });
    this.worker.on('error', (err) => onExit(err));
    this.worker.on('exit', (code) => {
      for (const resolve of this.waiting.values()) resolve('');
      this.waiting.clear();
      if (!this.closed) onExit(new Error(`the prober thread exited with code ${code}`));
    });
  }

  private send(cmd: ProberCommand): void {
    if (!this.closed) this.worker.postMessage(cmd);
  }

  addPod(pod: ProbePod): void {
    this.send({ type: 'addPod', pod });
  }
  stopLivenessAndStartup(uid: string): void {
    this.send({ type: 'stopLivenessAndStartup', uid });
  }
  removePod(uid: string): void {
    this.send({ type: 'removePod', uid });
  }
  cleanupPods(uids: string[]): void {
    this.send({ type: 'cleanupPods', uids });
  }
  trigger(uid: string, container: string, probeType: ProbeType): void {
    this.send({ type: 'trigger', uid, container, probeType });
  }

  metricsText(): Promise<string> {
    if (this.closed) return Promise.resolve('');
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ type: 'metrics', id } satisfies ProberCommand);
    });
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

  constructor(o: InlineProberOptions, onBatch: (batch: ProberBatch) => void) {
    this.cri = new CriClient({ runtimeEndpoint: o.runtimeEndpoint, timeoutMs: o.runtimeRequestTimeoutMs });
    const runCtx = { cri: this.cri, clock: o.clock, runtimeRequestTimeoutMs: o.runtimeRequestTimeoutMs };
    this.host = new ProberHost({
      clock: o.clock,
      nodeIP: o.nodeIP,
      statusOf: (uid) => {
        const slot = o.cache.slotOf(uid);
        return slot === undefined ? undefined : o.cache.read(slot, uid);
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
