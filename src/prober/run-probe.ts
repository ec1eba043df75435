/**
 * One probe run (upstream prober.probe / runProbeWithRetries / runProbe):
 * exec (CRI ExecSync with the probe's timeout), httpGet, tcpSocket, grpc.
 *
 * Contract: never throws. A handler *error* (not a failed check: a port that
 * cannot be resolved, an exec the runtime could not start) is retried up to
 * three times; if it persists the run has no result (the worker throws it
 * away, as upstream) and an Unhealthy "errored" event. A failed check is a
 * Failure with an Unhealthy event; a redirect to another host is a Success
 * with a ProbeWarning event.
 */
import type { Container, Probe } from '../api/pod.js';
import type { Clock } from '../common/clock.js';
import type { CriApi } from '../cri/client.js';
import { expand } from '../pod/env-values.js';
import { resolveContainerPort } from '../handlers/container-port.js';
import { execInContainer, ExecTimeoutError } from '../handlers/exec-in-container.js';
import { HttpGetError, httpGet, newRequestForHttpGetAction, type HttpGetRequest, type HttpGetResponse } from '../handlers/http-get.js';
import { doGrpcProbe } from './grpc-probe.js';
import type { ProbeContainer, ProbeOutcome, ProbeType } from './probe-types.js';
import { doTcpProbe, type ProbeRun } from './tcp-probe.js';
import { errorMessage } from '../common/error-message.js';

const MAX_PROBE_RETRIES = 3;
/** upstream exec prober maxReadLength */
const MAX_EXEC_OUTPUT_BYTES = 10 * 1024;

export interface ProbeRunContext {
  cri: CriApi;
  clock: Clock;
  runtimeRequestTimeoutMs: number;
  /** Seams for tests; default: the real handlers. */
  httpGet?: (request: HttpGetRequest, timeoutMs: number) => Promise<HttpGetResponse>;
  tcp?: (host: string, port: number, timeoutMs: number) => Promise<ProbeRun>;
  grpc?: (host: string, port: number, service: string, timeoutMs: number) => Promise<ProbeRun>;
}

export interface ProbeTarget {
  podName: string;
  namespace: string;
  container: ProbeContainer;
  containerId: string;
  /** The pod's IP (the node's for host-network pods); '' when unknown. */
  podIP: string;
}

export interface ProbeAttempt {
  /** What the worker records; undefined when the probe errored (the result is thrown away). */
  result?: 'Success' | 'Failure';
  outcome: ProbeOutcome;
  output: string;
  error?: string;
  /** The event upstream records for this run, if any. */
  event?: { reason: 'Unhealthy' | 'ProbeWarning'; message: string };
}

class HandlerError extends Error {}

/** Upstream ExpandContainerCommandOnlyStatic: $(VAR) from the container's literal env values. */
function expandStatic(command: readonly string[], container: Pick<Container, 'env'>): string[] {
  const vars = new Map<string, string>();
  for (const e of container.env ?? []) vars.set(e.name, e.value ?? '');
  return command.map((c) => expand(c, (n) => vars.get(n)));
}

async function runOnce(ctx: ProbeRunContext, spec: Probe, t: ProbeTarget): Promise<ProbeRun> {
  const timeoutMs = Math.max(1, spec.timeoutSeconds ?? 1) * 1000;
  const c = t.container;
  if (spec.exec) {
    const cmd = expandStatic(spec.exec.command ?? [], c);
    try {
      const r = await execInContainer(ctx.cri, t.containerId, cmd, {
        timeoutSeconds: timeoutMs / 1000,
        runtimeRequestTimeoutMs: ctx.runtimeRequestTimeoutMs,
      });
      const output = r.output.subarray(0, MAX_EXEC_OUTPUT_BYTES).toString();
      return { outcome: r.exitCode === 0 ? 'success' : 'failure', output };
    } catch (err) {
      if (err instanceof ExecTimeoutError) return { outcome: 'failure', output: err.message };
      throw new HandlerError(errorMessage(err));
    }
  }
  if (spec.httpGet) {
    let request: HttpGetRequest;
    try {
      request = newRequestForHttpGetAction(spec.httpGet, c, t.podIP, 'probe');
    } catch (err) {
      throw new HandlerError(errorMessage(err));
    }
    let res: HttpGetResponse;
    try {
      res = ctx.httpGet
        ? await ctx.httpGet(request, timeoutMs)
        : await httpGet(request, { clock: ctx.clock, timeoutMs, followNonLocalRedirects: false });
    } catch (err) {
      if (err instanceof HttpGetError) return { outcome: 'failure', output: err.message };
      throw new HandlerError(errorMessage(err));
    }
    if (res.statusCode >= 200 && res.statusCode < 400) {
      if (res.statusCode >= 300) return { outcome: 'warning', output: `Probe terminated redirects, Response body: ${res.body}` };
      return { outcome: 'success', output: res.body };
    }
    // Upstream keeps the body out of the message (issue 99425).
    return { outcome: 'failure', output: `HTTP probe failed with statuscode: ${res.statusCode}` };
  }
  if (spec.tcpSocket) {
    let port: number;
    try {
      port = resolveContainerPort(spec.tcpSocket.port, c);
    } catch (err) {
      throw new HandlerError(errorMessage(err));
    }
    const host = spec.tcpSocket.host || t.podIP;
    return ctx.tcp ? ctx.tcp(host, port, timeoutMs) : doTcpProbe(host, port, timeoutMs, ctx.clock);
  }
  if (spec.grpc) {
    const service = spec.grpc.service ?? '';
    return ctx.grpc
      ? ctx.grpc(t.podIP, spec.grpc.port, service, timeoutMs)
      : doGrpcProbe(t.podIP, spec.grpc.port, service, timeoutMs, ctx.clock);
  }
  throw new HandlerError(`missing probe handler for ${t.podName}_${t.namespace}:${c.name}`);
}

/** Upstream prober.probe for one probe type of one container instance. */
export async function runProbe(ctx: ProbeRunContext, type: ProbeType, spec: Probe, t: ProbeTarget): Promise<ProbeAttempt> {
  let lastError = '';
  for (let i = 0; i < MAX_PROBE_RETRIES; i++) {
    let run: ProbeRun;
    try {
      run = await runOnce(ctx, spec, t);
    } catch (err) {
      lastError = errorMessage(err);
      continue;
    }
    switch (run.outcome) {
      case 'success':
        return { result: 'Success', ...run };
      case 'warning':
        return { result: 'Success', ...run, event: { reason: 'ProbeWarning', message: `${type} probe warning: ${run.output}` } };
      case 'failure':
        return { result: 'Failure', ...run, event: { reason: 'Unhealthy', message: `${type} probe failed: ${run.output}` } };
      default:
        return { result: 'Failure', ...run };
    }
  }
  return {
    outcome: 'unknown',
    output: '',
    error: lastError,
    event: { reason: 'Unhealthy', message: `${type} probe errored and resulted in unknown state: ${lastError}` },
  };
}
