/**
 * The kubelet's view of runtime health (upstream runtimeState + updateRuntimeUp):
 * CRI Status is polled every 5 s.
 * - A successful Status with RuntimeReady=true records the time of the last
 *   base runtime sync; when none succeeded within 30 s the runtime is reported
 *   "container runtime is down" (before the first one: "container runtime status
 *   check may not have completed yet").
 * - RuntimeReady=false is the error "Container runtime not ready: <condition>".
 * - An unhealthy PLEG adds "PLEG is not healthy: <why>".
 * - NetworkReady=false is a network error ("runtime network not ready: …"): only
 *   pods that need the pod network wait, and the node is NotReady.
 * The syncLoop skips work while runtimeErrors() is non-empty; the node's Ready
 * condition aggregates runtimeErrors() and networkErrors(). It waits with
 * upstream's backoff, but `changes` wakes it as soon as a Status check or
 * a PLEG relist (changed(), wired to the PLEG) may have cleared the errors:
 * at start-up the first relist lands within milliseconds, not at the end of
 * the first 100 ms backoff.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { runPeriodically } from '../../common/periodic.js';
import { Wakeup, type WakeSource } from '../../common/wakeup.js';
import type { CriClient } from '../../cri/client.js';
import { errorMessage } from '../../common/error-message.js';

export const RUNTIME_STATUS_PERIOD_MS = 5000;
/** Upstream maxWaitForContainerRuntime, the base runtime sync threshold. */
export const RUNTIME_SYNC_THRESHOLD_MS = 30_000;

export interface HealthSource {
  healthy(): { ok: boolean; message: string };
}

type Condition = { type: string; status: boolean; reason: string; message: string } | undefined;

/** Upstream RuntimeCondition.String(): "RuntimeReady=false reason:X message:Y" (nil prints as <nil>). */
function describe(c: Condition): string {
  return c ? `${c.type}=${c.status} reason:${c.reason} message:${c.message}` : '<nil>';
}

export class RuntimeState {
  private lastBaseRuntimeSync: number | undefined;
  private runtimeError: string | undefined;
  private networkError: string | undefined = 'network state unknown';
  private lastLoggedStatusError: string | undefined;
  private readonly change = new Wakeup();

  constructor(
    private readonly cri: Pick<CriClient, 'status'>,
    private readonly pleg: HealthSource,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Polls Status now and then every period until the signal aborts. */
  start(signal: AbortSignal): void {
    // update() catches its errors, so onError fires only on a bug; the loop goes on.
    const onError = (err: unknown) => this.logger.error({ err }, 'Runtime status update failed');
    runPeriodically(() => this.update(), { periodMs: RUNTIME_STATUS_PERIOD_MS, immediate: true, signal, clock: this.clock, onError }).catch(
      onError,
    );
  }

  async update(): Promise<void> {
    try {
      await this.check();
    } finally {
      this.changed();
    }
  }

  /** Something runtimeErrors() reads may have changed (a PLEG relist completed, a Status check ended). */
  changed(): void {
    this.change.fire();
  }

  /** Wakes its subscribers at the next changed(). */
  get changes(): WakeSource {
    return this.change;
  }

  private async check(): Promise<void> {
    let conditions: Condition[];
    try {
      const s = await this.cri.status({}, { timeoutMs: 10_000 });
      conditions = s.status?.conditions ?? [];
      this.lastLoggedStatusError = undefined;
    } catch (err) {
      const msg = errorMessage(err);
      if (msg !== this.lastLoggedStatusError) this.logger.error({ err: msg }, 'Container runtime sanity check failed');
      this.lastLoggedStatusError = msg;
      return;
    }
    const cond = (type: string) => conditions.find((c) => c?.type === type);
    const network = cond('NetworkReady');
    const networkError = network?.status ? undefined : `runtime network not ready: ${describe(network)}`;
    if (networkError && networkError !== this.networkError) this.logger.error({ err: networkError }, 'Container runtime network not ready');
    this.networkError = networkError;
    const runtime = cond('RuntimeReady');
    if (!runtime?.status) {
      const runtimeError = `Container runtime not ready: ${describe(runtime)}`;
      if (runtimeError !== this.runtimeError) this.logger.error({ err: runtimeError }, 'Container runtime not ready');
      this.runtimeError = runtimeError;
      return;
    }
    this.runtimeError = undefined;
    this.lastBaseRuntimeSync = this.clock.now();
  }

  /** Errors that stop the syncLoop and make the node NotReady (upstream runtimeErrors). */
  runtimeErrors(): string[] {
    const errs: string[] = [];
    if (this.lastBaseRuntimeSync === undefined) errs.push('container runtime status check may not have completed yet');
    else if (this.clock.now() - this.lastBaseRuntimeSync >= RUNTIME_SYNC_THRESHOLD_MS) errs.push('container runtime is down');
    const pleg = this.pleg.healthy();
    if (!pleg.ok) errs.push(`PLEG is not healthy: ${pleg.message}`);
    if (this.runtimeError) errs.push(this.runtimeError);
    return errs;
  }

  networkErrors(): string | undefined {
    return this.networkError;
  }
}
