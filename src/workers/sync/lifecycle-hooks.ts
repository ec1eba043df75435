/**
 * Container lifecycle hooks (upstream pkg/kubelet/lifecycle/handlers.go
 * handlerRunner.Run): exec through CRI ExecSync, httpGet against the pod IP
 * (or the handler's host), sleep. Runs in a worker task.
 *
 * Contract: runHandler never throws; it returns the message upstream puts
 * into events and waiting reasons. An exec hook has no timeout of its own
 * (upstream RunInContainer with timeout 0); callers bound it with `signal`
 * (preStop: the grace period). An HTTP hook fails only when the request
 * fails, never on the status code, as upstream.
 */
import type { Container, Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { CriApi } from '../../cri/client.js';
import { execInContainer, exitErrorMessage } from '../../handlers/exec-in-container.js';
import { httpGet, newRequestForHttpGetAction, type HttpGetRequest } from '../../handlers/http-get.js';
import { formatPod } from '../../pod/backoff.js';
import { errorMessage } from '../../common/error-message.js';

type LifecycleHandler = NonNullable<NonNullable<Container['lifecycle']>['postStart']>;

export interface HookContext {
  cri: CriApi;
  clock: Clock;
  /** HTTP GET for httpGet hooks; injectable for tests. Default: the shared httpGet client, following any redirect. */
  httpGet?: (request: HttpGetRequest, signal?: AbortSignal) => Promise<void>;
}

export type HookResult = { ok: true } | { ok: false; message: string };

/** Go's %v of a []string: `[a b c]`. */
const goList = (xs: readonly string[]) => `[${xs.join(' ')}]`;
/** Go's %q for the common case (JSON string syntax). */
const goQuote = (s: string) => JSON.stringify(s);

/**
 * Runs one lifecycle handler of `container` (running as `containerId`).
 * `podIP` is used when an httpGet handler names no host.
 */
export async function runHandler(
  ctx: HookContext,
  pod: Pod,
  container: Container,
  containerId: string,
  handler: LifecycleHandler,
  podIP: string,
  signal?: AbortSignal,
): Promise<HookResult> {
  if (handler.exec) {
    const command = handler.exec.command ?? [];
    try {
      // upstream RunInContainer with timeout 0: the caller bounds it (preStop: the grace period).
      const r = await execInContainer(ctx.cri, containerId, command, { timeoutSeconds: 0, runtimeRequestTimeoutMs: 0, signal });
      if (r.exitCode === 0) return { ok: true };
      return { ok: false, message: execFailure(command, container, pod, exitErrorMessage(command, r), r.output.toString()) };
    } catch (e) {
      return { ok: false, message: execFailure(command, container, pod, errorMessage(e), '') };
    }
  }
  if (handler.httpGet) {
    const action = handler.httpGet;
    try {
      if (!action.host && !podIP) throw new Error('failed to find networking container: the pod has no IP');
      const request = newRequestForHttpGetAction(action, container, podIP, 'lifecycle');
      if (ctx.httpGet) await ctx.httpGet(request, signal);
      // Upstream discards the body and ignores the status code.
      else await httpGet(request, { clock: ctx.clock, followNonLocalRedirects: true, signal });
      return { ok: true };
    } catch (e) {
      const err = e instanceof Error ? (e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message) : String(e);
      return {
        ok: false,
        message: `HTTP lifecycle hook (${action.path ?? ''}) for Container ${goQuote(container.name)} in Pod ${goQuote(formatPod(pod))} failed - error: ${err}`,
      };
    }
  }
  if (handler.sleep) {
    await ctx.clock.sleep(Math.max(0, handler.sleep.seconds) * 1000, signal).catch(() => undefined);
    return { ok: true };
  }
  return { ok: false, message: `Cannot run handler: invalid handler: ${JSON.stringify(handler)}` };
}

function execFailure(command: readonly string[], container: Container, pod: Pod, err: string, output: string): string {
  return (
    `Exec lifecycle hook (${goList(command)}) for Container ${goQuote(container.name)} in Pod ${goQuote(formatPod(pod))} ` +
    `failed - error: ${err}, message: ${goQuote(output)}`
  );
}
