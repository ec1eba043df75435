/**
 * Runs protocol tasks either on a piscina pool or inline on the calling
 * thread. Both modes call the same task functions (src/workers/tasks.ts);
 * inline mode (--worker-threads=0) exists for debugging and for benchmarks to
 * compare against, not as a second implementation.
 */
import { MessageChannel, type ResourceLimits, type Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { Piscina } from 'piscina';
import type { Clock } from '../common/clock.js';
import { WorkerCrashedError } from '../common/errors.js';
import { errorMessage } from '../common/error-message.js';
import { nodeEndpoint } from '../common/comlink-node.js';
import { deserializeError } from '../common/error-wire.js';
import type { RelistLoopApi, RequestOf, TaskRequest, TaskResult, TaskResults, TaskType } from './protocol/protocol.js';
import type { WorkerInit } from '../shared/shared-state.js';
import { RelistLoop } from './relist/relist-loop.js';
import { createTaskContext, runTask, type TaskContext } from './tasks.js';
import { poolResourceLimits, WORKER_RESOURCE_LIMITS } from './worker-limits.js';
import type { Runtime } from '../runtime/runtime.js';

export interface TaskRunner {
  /**
   * Runs one task. Rejects with the task's own error (a KubeletTsError
   * subclass, e.g. CriUnavailableError) or with WorkerCrashedError when the
   * worker died mid-task; both are safe to retry.
   */
  run<K extends TaskType>(request: RequestOf<K>): Promise<TaskResults[K]>;
  /**
   * Starts the PLEG's relist loop where relists run: a long-lived task on a
   * pool worker (comlink over a MessagePort), or on this thread inline.
   */
  relistLoop(): RelistLoopConnection;
  /** Worker threads (0 in inline mode). */
  readonly threads: number;
  close(): Promise<void>;
}

export interface RelistLoopConnection {
  api: RelistLoopApi;
  /**
   * Settles when the loop has ended: undefined after stop(), an Error when
   * its worker died (calls in flight then never answer: race them with this).
   */
  ended: Promise<Error | undefined>;
}

function unwrap<K extends TaskType>(result: TaskResult<K>): TaskResults[K] {
  if (result.ok) return result.value;
  throw deserializeError(result.error);
}

export class InlineRunner implements TaskRunner {
  readonly threads = 0;
  private readonly ctx: TaskContext;

  /** `runtime` replaces the CRI-backed runtime and `clock` the real clock (tests use fakes). */
  constructor(init: WorkerInit, runtime?: Runtime, clock?: Clock) {
    this.ctx = createTaskContext(init, runtime);
    if (clock) this.ctx.clock = clock;
  }

  relistLoop(): RelistLoopConnection {
    const loop = new RelistLoop(this.ctx);
    return { api: loop, ended: loop.stopped.then(() => undefined) };
  }

  async run<K extends TaskType>(request: RequestOf<K>): Promise<TaskResults[K]> {
    return unwrap((await runTask(this.ctx, request as TaskRequest)) as TaskResult<K>);
  }

  async close(): Promise<void> {
    this.ctx.close();
  }
}

export interface PoolOptions {
  threads: number;
  /** Tasks are I/O-bound (CRI calls), so each worker runs several at once. */
  concurrentTasksPerWorker?: number;
  /** The threads' V8 limits; absent: WORKER_RESOURCE_LIMITS. */
  resourceLimits?: ResourceLimits;
}

/** The worker entry file next to this module: .ts under tsx/vitest, .js from dist. */
function workerEntry(): { filename: string; execArgv: string[] } {
  const ts = import.meta.url.endsWith('.ts');
  return {
    filename: new URL(ts ? './worker-entry.ts' : './worker-entry.js', import.meta.url).href,
    execArgv: ts ? ['--import', 'tsx'] : [],
  };
}

export class PoolRunner implements TaskRunner {
  readonly threads: number;
  private readonly pool: Piscina;
  /** Relist loops still running: each holds a task that close() must end first (piscina waits for running tasks). */
  private readonly loops = new Set<RelistLoopConnection>();

  constructor(init: WorkerInit, options: PoolOptions) {
    if (!(options.threads >= 1)) throw new RangeError(`PoolRunner needs at least one thread, got ${options.threads}`);
    this.threads = options.threads;
    const { filename, execArgv } = workerEntry();
    this.pool = new Piscina({
      filename,
      execArgv,
      minThreads: options.threads,
      maxThreads: options.threads,
      concurrentTasksPerWorker: options.concurrentTasksPerWorker ?? Math.max(8, Math.ceil(16 / options.threads)),
      // 'sync' would park an idle worker's event loop, freezing its gRPC channel and timers.
      atomics: 'disabled',
      idleTimeout: Number.POSITIVE_INFINITY,
      workerData: init,
      resourceLimits: options.resourceLimits ?? WORKER_RESOURCE_LIMITS,
    });
  }

  async run<K extends TaskType>(request: RequestOf<K>): Promise<TaskResults[K]> {
    let result: TaskResult<K>;
    try {
      result = (await this.pool.run(request)) as TaskResult<K>;
    } catch (err) {
      throw new WorkerCrashedError(
        `worker thread failed while running task "${request.type}": ${errorMessage(err)}; the pool replaces the worker and the task can be retried`,
        { cause: err },
      );
    }
    return unwrap(result);
  }

  relistLoop(): RelistLoopConnection {
    const { port1, port2 } = new MessageChannel();
    const task = this.pool.run({ type: 'relistLoop', port: port2 } satisfies TaskRequest, { transferList: [port2] });
    const remote = Comlink.wrap<RelistLoopApi>(nodeEndpoint(port1));
    const api: RelistLoopApi = {
      // The handler runs on this thread: the worker calls it through a comlink proxy.
      attach: (handler) => remote.attach(Comlink.proxy(handler)),
      start: (periodMs) => remote.start(periodMs),
      relistNow: () => remote.relistNow(),
      setPeriod: (periodMs) => remote.setPeriod(periodMs),
      stop: () => remote.stop(),
    };
    const ended = (task as Promise<TaskResult<'relistLoop'>>)
      .then(
        (r): Error | undefined => (r.ok ? undefined : deserializeError(r.error)),
        (err: unknown) =>
          new WorkerCrashedError(`worker thread failed while running the relist loop: ${errorMessage(err)}; the pool replaces the worker`, {
            cause: err,
          }),
      )
      .finally(() => {
        this.loops.delete(conn);
        remote[Comlink.releaseProxy]();
        port1.close();
      });
    const conn = { api, ended };
    this.loops.add(conn);
    return conn;
  }

  /** The live worker threads (for diagnostics and the crash test). */
  workers(): Worker[] {
    return this.pool.threads;
  }

  async close(): Promise<void> {
    await Promise.all([...this.loops].map((l) => Promise.race([l.api.stop(), l.ended]).catch(() => undefined)));
    await this.pool.close({ force: true });
  }
}

/** Inline for 0 threads, else a pool whose threads' young generation follows maxPods (worker-limits.ts). */
export function createTaskRunner(init: WorkerInit, threads: number, maxPods: number): TaskRunner {
  return threads === 0 ? new InlineRunner(init) : new PoolRunner(init, { threads, resourceLimits: poolResourceLimits(maxPods) });
}
