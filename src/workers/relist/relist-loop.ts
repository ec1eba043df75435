/**
 * The PLEG's relist loop, where the relist runs: in a pool worker (a
 * long-lived task behind comlink, see serveRelistLoop) or, in inline mode, on
 * the main thread. It relists every period on its own timer (upstream
 * wait.Until: the period starts when a relist ends) and reports each relist
 * to the main thread's handler (GenericPleg), then waits for the handler
 * before the next one, so relists never overlap with the inspections they
 * cause.
 *
 * A relist that finds nothing new (no events, no new pods, no held
 * reinspections on the main thread) is finished here: this thread sets the
 * cache's global timestamp (upstream cache.UpdateTime at the end of relist)
 * and its duration ends there. The report that follows only carries the
 * relist's gauges and timings. Any other relist is finished by the handler,
 * which inspects, publishes and sets the timestamp, and measures the
 * duration from this relist's start.
 */
import * as Comlink from 'comlink';
import type { MessagePort } from 'node:worker_threads';
import type { Clock } from '../../common/clock.js';
import { Nudge, runPeriodically } from '../../common/periodic.js';
import type { Runtime } from '../../runtime/runtime.js';
import { nodeEndpoint } from '../../common/comlink-node.js';
import { serializeError } from '../../common/error-wire.js';
import type { RelistAck, RelistHandler, RelistLoopApi, RelistReport } from '../protocol/protocol.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';
import type { RelistRecordTable } from '../../shared/relist-records.js';
import { relist } from './relist.js';
import { epochHiRes } from '../../common/time.js';
import { crashable, type CrashArm } from '../../shared/crash-arm.js';

export interface RelistLoopContext {
  runtime: Runtime;
  records: RelistRecordTable;
  cache: PodStatusCache;
  clock: Clock;
  /** Test-only (fault suite): a crash armed for relists. */
  crashArm?: CrashArm;
}

export class RelistLoop implements RelistLoopApi {
  private handler: RelistHandler | undefined;
  private periodMs = 1000;
  /** The main thread holds work for the next relist (its last ack said so). */
  private mainBusy = false;
  /** Relists run one at a time, in call order (one record-table writer). */
  private chain: Promise<void> = Promise.resolve();
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();
  /** A new period ends the wait: the loop relists at once. */
  private readonly nudge = new Nudge();
  private resolveStopped!: () => void;
  /** Resolves when stop() has ended the loop. */
  readonly stopped = new Promise<void>((resolve) => (this.resolveStopped = resolve));

  constructor(private readonly ctx: RelistLoopContext) {}

  /** Sets the handler that gets every relist's report (before start or relistNow). */
  attach(handler: RelistHandler): Promise<void> {
    this.handler = handler;
    return Promise.resolve();
  }

  /** Starts relisting every `periodMs`. */
  start(periodMs: number): Promise<void> {
    this.periodMs = periodMs;
    this.running ??= runPeriodically(() => this.relistNow(), {
      periodMs: () => this.periodMs,
      signal: this.abort.signal,
      clock: this.ctx.clock,
      immediate: true,
      nudge: this.nudge,
      // once() reports its own failures to the handler (report.error); relistNow does not reject.
      onError: () => undefined,
    });
    return Promise.resolve();
  }

  /** Forgets the handler and returns it (its comlink proxy is released by the caller). */
  detach(): RelistHandler | undefined {
    const handler = this.handler;
    this.handler = undefined;
    return handler;
  }

  /** Relists now (after a relist in progress, if any) and resolves when the handler has finished with it. */
  relistNow(): Promise<void> {
    const next = this.chain.then(() => this.once());
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** A new period; the loop relists at once and then keeps it (upstream GenericPLEG.Update). */
  setPeriod(periodMs: number): Promise<void> {
    this.periodMs = periodMs;
    this.nudge.fire();
    return Promise.resolve();
  }

  /** Ends the loop after the relist in progress; resolves when it has ended. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    await this.chain;
    this.resolveStopped();
  }

  private async once(): Promise<void> {
    const { clock, cache } = this.ctx;
    const timestamp = clock.now();
    const startedAt = epochHiRes();
    const t0 = performance.now();
    let report: RelistReport;
    try {
      const summary = await crashable(this.ctx.crashArm, 'relist', relist(this.ctx));
      const quiet = summary.events.length === 0 && summary.newPods.length === 0 && !this.mainBusy;
      if (quiet) cache.setGlobalTimestamp(timestamp);
      report = { timestamp, startedAt, workerMs: performance.now() - t0, endedAt: epochHiRes(), quiet, summary };
    } catch (err) {
      report = { timestamp, startedAt, workerMs: performance.now() - t0, endedAt: epochHiRes(), quiet: false, error: serializeError(err) };
    }
    const handler = this.handler;
    if (!handler) return;
    let ack: RelistAck;
    try {
      ack = await handler.relisted(report);
    } catch {
      // The report did not reach the handler (the main thread is going away): the next relist goes to it.
      this.mainBusy = true;
      return;
    }
    this.mainBusy = ack.busy;
  }
}

/**
 * The `relistLoop` pool task: serves a RelistLoop on `port` (comlink) until
 * the main thread stops it. The task holds one of its worker's task slots for
 * the agent's life.
 */
export async function serveRelistLoop(ctx: RelistLoopContext, port: MessagePort): Promise<void> {
  const loop = new RelistLoop(ctx);
  Comlink.expose(loop, nodeEndpoint(port));
  await loop.stopped;
  // Let comlink answer the stop call before the port closes.
  await new Promise((resolve) => setImmediate(resolve));
  // The handler came through a comlink proxy: releasing it closes its port here and, on the main thread, the
  // port that exposes the handler (otherwise one stays open per loop, with the main thread's listener).
  const handler = loop.detach() as Comlink.Remote<RelistHandler> | undefined;
  handler?.[Comlink.releaseProxy]();
  port.close();
}
