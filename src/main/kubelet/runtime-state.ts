/**
 * The kubelet's view of runtime health (upstream runtimeState +
 * updateRuntimeUp): CRI Status is polled every 5 s; RuntimeReady=false, a
 * failed Status call or an unhealthy PLEG are runtime errors (the syncLoop
 * then skips work with backoff); NetworkReady=false is a network error (only
 * pods that need the pod network wait).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import type { CriClient } from '../../cri/client.js';

export const RUNTIME_STATUS_PERIOD_MS = 5000;

export interface HealthSource {
  healthy(): { ok: boolean; message: string };
}

export class RuntimeState {
  private runtimeError: string | undefined = 'container runtime status check may not have completed yet';
  private networkError: string | undefined = 'network state unknown';

  constructor(
    private readonly cri: CriClient,
    private readonly pleg: HealthSource,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Polls Status now and then every period until the signal aborts. */
  start(signal: AbortSignal): void {
    const loop = async () => {
      while (!signal.aborted) {
        await this.update();
        await this.clock.sleep(RUNTIME_STATUS_PERIOD_MS, signal).catch(() => undefined);
      }
    };
    // update() and the sleep catch their errors, so this fires only on a bug; the state then goes stale.
    loop().catch((err: unknown) => this.logger.error({ err }, 'Runtime status loop stopped'));
  }

  async update(): Promise<void> {
    try {
      const s = await this.cri.status({}, { timeoutMs: 10_000 });
      const cond = (type: string) => s.status?.conditions.find((c) => c.type === type);
      const runtime = cond('RuntimeReady');
      const network = cond('NetworkReady');
      const runtimeError = runtime?.status
        ? undefined
        : `container runtime not ready: RuntimeReady=false reason:${runtime?.reason ?? ''} message:${runtime?.message ?? ''}`;
      const networkError = network?.status
        ? undefined
        : `container runtime network not ready: NetworkReady=false reason:${network?.reason ?? ''} message:${network?.message ?? ''}`;
      if (runtimeError !== this.runtimeError && runtimeError) this.logger.error({ err: runtimeError }, 'Container runtime not ready');
      if (networkError !== this.networkError && networkError)
        this.logger.error({ err: networkError }, 'Container runtime network not ready');
      this.runtimeError = runtimeError;
      this.networkError = networkError;
    } catch (err) {
      const msg = `container runtime is down: ${err instanceof Error ? err.message : String(err)}`;
      if (msg !== this.runtimeError) this.logger.error({ err: msg }, 'Container runtime status check failed');
      this.runtimeError = msg;
    }
  }

  /** Errors that stop the syncLoop (upstream runtimeErrors). */
  runtimeErrors(): string[] {
    const errs: string[] = [];
    if (this.runtimeError) errs.push(this.runtimeError);
    const pleg = this.pleg.healthy();
    if (!pleg.ok) errs.push(`PLEG is not healthy: ${pleg.message}`);
    return errs;
  }

  networkErrors(): string | undefined {
    return this.networkError;
  }
}
