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
import type { Container, HTTPGetAction, Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { CriApi } from '../../cri/client.js';
import { formatPod } from './backoff.js';

type LifecycleHandler = NonNullable<NonNullable<Container['lifecycle']>['postStart']>;

export interface HookContext {
  cri: CriApi;
  clock: Clock;
  /** HTTP GET for httpGet hooks; injectable for tests. Default: fetch. */
  httpGet?: (url: string, headers: Record<string, string>, signal?: AbortSignal) => Promise<void>;
}

export type HookResult = { ok: true } | { ok: false; message: string };

/** ExecSync has no deadline upstream for hooks; gRPC needs one, so use a year. */
const NO_DEADLINE_MS = 365 * 24 * 3600 * 1000;

/** Go's %v of a []string: `[a b c]`. */
const goList = (xs: readonly string[]) => `[${xs.join(' ')}]`;
/** Go's %q for the common case (JSON string syntax). */
const goQuote = (s: string) => JSON.stringify(s);

async function defaultHttpGet(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<void> {
  const res = await fetch(url, { headers, signal, redirect: 'follow' });
  // Upstream discards the body and ignores the status code.
  await res.arrayBuffer().catch(() => undefined);
}

/** Upstream resolveContainerPort: a number, or a named port of the container. */
export function resolvePort(port: HTTPGetAction['port'], container: Container): number | undefined {
  if (typeof port === 'number') return port;
  const asInt = /^\d+$/.test(port) ? Number(port) : undefined;
  if (asInt !== undefined) return asInt;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/** The URL and headers of an httpGet action (upstream NewRequestForHTTPGetAction). */
export function httpGetRequest(
  action: HTTPGetAction,
  container: Container,
  podIP: string,
): { url: string; headers: Record<string, string> } {
  const host = action.host || podIP;
  const port = resolvePort(action.port, container);
  if (port === undefined) throw new Error(`couldn't find port: ${String(action.port)} in container ${container.name}`);
  const scheme = (action.scheme ?? 'HTTP').toLowerCase();
  let path = action.path ?? '';
  if (!path.startsWith('/')) path = `/${path}`;
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const headers: Record<string, string> = { 'User-Agent': 'kube-lifecycle/1.34', Accept: '*/*' };
  for (const h of action.httpHeaders ?? []) headers[h.name] = h.value;
  return { url: `${scheme}://${hostPort}${path}`, headers };
}

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
      const r = await ctx.cri.execSync({ containerId, cmd: command, timeout: 0n }, { timeoutMs: NO_DEADLINE_MS, signal });
      if (r.exitCode === 0) return { ok: true };
      const stdout = Buffer.from(r.stdout).toString();
      const stderr = Buffer.from(r.stderr).toString();
      const err = `command '${command.join(' ')}' exited with ${r.exitCode}: ${stderr}`;
      return { ok: false, message: execFailure(command, container, pod, err, stdout + stderr) };
    } catch (e) {
      return { ok: false, message: execFailure(command, container, pod, e instanceof Error ? e.message : String(e), '') };
    }
  }
  if (handler.httpGet) {
    const action = handler.httpGet;
    try {
      if (!action.host && !podIP) throw new Error('failed to find networking container: the pod has no IP');
      const { url, headers } = httpGetRequest(action, container, podIP);
      await (ctx.httpGet ?? defaultHttpGet)(url, headers, signal);
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
