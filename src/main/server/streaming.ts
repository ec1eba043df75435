/**
 * The kubelet server's streaming endpoints (upstream server.go getExec,
 * getAttach, getPortForward, getRun and Kubelet.GetExec/GetAttach/
 * GetPortForward/RunInContainer):
 *
 *   GET|POST /exec/{ns}/{pod}[/{uid}]/{container}?command=…&input=1&output=1&error=1&tty=1
 *   GET|POST /attach/{ns}/{pod}[/{uid}]/{container}?input=1&output=1&error=1
 *   GET|POST /portForward/{ns}/{pod}[/{uid}]           (WebSocket clients: &port=N…)
 *   POST     /run/{ns}/{pod}[/{uid}]/{container}?cmd=…  (the command's output, stdout then stderr)
 *
 * For exec, attach and port-forward the runtime is asked (CRI Exec, Attach,
 * PortForward) for a one-time URL on its streaming server, and the client's
 * upgrade request is proxied there (stream-proxy.ts), except an exec or
 * attach WebSocket upgrade offering v5.channel.k8s.io, which the kubelet
 * accepts itself and bridges to the runtime over SPDY (v5-bridge.ts); a
 * request without an upgrade gets upstream's 500 "Upgrade request required". The container is
 * looked up among the pod's running containers in the runtime, as upstream's
 * findContainer; errors carry upstream's status and text.
 *
 * For exec and attach, a container the last relist saw running is asked for
 * first (`cachedRunningContainerId`), saving the runtime list: the runtime's
 * Exec or Attach itself refuses a container that no longer runs, and then the
 * request takes upstream's path (a live list, then Exec or Attach), so every
 * answer is the one upstream would give.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import { CriError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { v } from '../../common/logger.js';
import { isV5WebSocketRequest } from './remotecommand-v5.js';
import { proxyUpgrade } from './stream-proxy.js';
import { bridgeV5 } from './v5-bridge.js';
import { GrpcStatus } from '../../common/rpc-error.js';

export type StreamKind = 'exec' | 'attach' | 'portForward' | 'run';

export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface StreamingHost {
  podByName(namespace: string, name: string): Pod | undefined;
  /** The id of the pod's running container `name` in the runtime, or undefined. */
  runningContainerId(pod: Pod, name: string): Promise<string | undefined>;
  /** The id of the pod's container `name` that the last relist saw running, or undefined (no runtime call). */
  cachedRunningContainerId?(pod: Pod, name: string): string | undefined;
  /** The id of the pod's newest ready sandbox in the runtime, or undefined. */
  readySandboxId(pod: Pod): Promise<string | undefined>;
  exec(containerId: string, cmd: string[], options: StreamOptions): Promise<string>;
  attach(containerId: string, options: StreamOptions): Promise<string>;
  portForward(podSandboxId: string, ports: number[]): Promise<string>;
  /** The command's stdout then stderr (upstream RunInContainer). */
  runInContainer(containerId: string, cmd: string[]): Promise<Buffer>;
  /** streamingConnectionIdleTimeout, ms; 0 = none. */
  idleTimeoutMs: number;
  logger: Logger;
}

/** An error with the HTTP status upstream answers it with. */
export class StreamError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface StreamParams {
  namespace: string;
  pod: string;
  uid: string;
  container: string;
}

/** The path parameters after /{kind}/, or undefined for a path upstream does not route (404). */
export function streamParams(kind: StreamKind, parts: readonly string[]): StreamParams | undefined {
  if (parts.some((p) => p === '')) return undefined;
  if (kind === 'portForward') {
    if (parts.length !== 2 && parts.length !== 3) return undefined;
    return { namespace: parts[0], pod: parts[1], uid: parts[2] ?? '', container: '' };
  }
  if (parts.length === 3) return { namespace: parts[0], pod: parts[1], uid: '', container: parts[2] };
  if (parts.length === 4) return { namespace: parts[0], pod: parts[1], uid: parts[2], container: parts[3] };
  return undefined;
}

/**
 * Upstream remotecommand NewOptions: each stream is on when its parameter
 * (core/v1's ExecStdinParam "input", ExecStdoutParam "output",
 * ExecStderrParam "error", ExecTTYParam "tty") is "1"; a TTY has no separate
 * stderr.
 */
export function streamOptions(query: URLSearchParams): StreamOptions {
  const on = (name: string) => query.get(name) === '1';
  const tty = on('tty');
  const o = { stdin: on('input'), stdout: on('output'), stderr: on('error') && !tty, tty };
  if (!o.stdin && !o.stdout && !o.stderr) throw new StreamError(400, 'you must specify at least 1 of stdin, stdout, stderr');
  return o;
}

/** Upstream portforward NewV4Options: WebSocket clients name the ports in the query; SPDY clients in their streams. */
export function forwardedPorts(query: URLSearchParams, webSocket: boolean): number[] {
  if (!webSocket) return [];
  const values = query.getAll('port');
  if (values.length === 0) throw new StreamError(400, 'query parameter "port" is required');
  return values.map((v) => {
    if (!/^\d+$/.test(v) || Number(v) > 65535) throw new StreamError(400, `unable to parse "${v}" as a port: invalid syntax`);
    if (Number(v) < 1) throw new StreamError(400, 'port "0" must be > 0');
    return Number(v);
  });
}

function isUpgrade(req: IncomingMessage): boolean {
  return /\bupgrade\b/i.test(req.headers.connection ?? '') && req.headers.upgrade !== undefined;
}

/** A CRI error as upstream's streaming.WriteError answers it: 404 for NotFound, 429 for ResourceExhausted, else 500. */
function fromRuntime(err: unknown): StreamError {
  if (err instanceof StreamError) return err;
  const code = err instanceof CriError ? err.grpcCode : undefined;
  const status = code === GrpcStatus.NOT_FOUND ? 404 : code === GrpcStatus.RESOURCE_EXHAUSTED ? 429 : 500;
  return new StreamError(status, errorMessage(err));
}

/** The runtime URL to proxy to, after upstream's checks, and for exec and attach the streams the runtime was asked for. */
async function streamUrl(
  host: StreamingHost,
  kind: Exclude<StreamKind, 'run'>,
  p: StreamParams,
  pod: Pod,
  req: IncomingMessage,
  query: URLSearchParams,
): Promise<{ url: string; streams?: StreamOptions }> {
  const podFullName = `${pod.metadata.name}_${pod.metadata.namespace ?? ''}`;
  const uidMatches = p.uid === '' || p.uid === pod.metadata.uid;
  if (kind === 'portForward') {
    const ports = forwardedPorts(query, (req.headers.upgrade ?? '').toLowerCase() === 'websocket');
    if (!uidMatches) throw new StreamError(404, 'pod not found');
    const sandbox = await host.readySandboxId(pod);
    if (!sandbox) throw new StreamError(500, `pod not found ("${podFullName}")`);
    return { url: await host.portForward(sandbox, ports) };
  }
  const opts = streamOptions(query);
  const spec = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].find((c) => c.name === p.container);
  // Attach's TTY is the container's own: whether its process has a terminal cannot change after it started.
  const streams = kind === 'exec' ? opts : { ...opts, tty: spec?.tty === true };
  const ask = kind === 'exec' ? (id: string) => host.exec(id, query.getAll('command'), streams) : (id: string) => host.attach(id, streams);
  const cached = uidMatches && (kind === 'exec' || spec) ? host.cachedRunningContainerId?.(pod, p.container) : undefined;
  if (cached) {
    const url = await ask(cached).catch(() => undefined);
    if (url !== undefined) return { url, streams };
  }
  const id = uidMatches ? await host.runningContainerId(pod, p.container) : undefined;
  if (kind === 'exec' && !id) throw new StreamError(500, `container not found ("${p.container}")`);
  if (!id || !spec) throw new StreamError(500, `container ${p.container} not found in pod ${podFullName}`);
  return { url: await ask(id), streams };
}

function reply(res: ServerResponse, status: number, body: string | Buffer, type = 'text/plain; charset=utf-8'): void {
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.end(body);
}

/**
 * Serves one streaming request. `upgrade` is the connection and the bytes
 * past its headers when the request asked for an upgrade (the server's
 * 'upgrade' event); the promise then settles when the session has ended.
 */
export async function serveStreaming(
  host: StreamingHost,
  kind: StreamKind,
  parts: readonly string[],
  query: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  upgrade?: { socket: Duplex; head: Buffer },
): Promise<void> {
  const method = req.method ?? 'GET';
  v(host.logger, 4).info(
    { kind, method, url: req.url, upgrade: req.headers.upgrade, protocols: req.headers['sec-websocket-protocol'] },
    'Streaming request',
  );
  const p = streamParams(kind, parts);
  if (!p) return reply(res, 404, '404 page not found\n');
  if (kind === 'run' ? method !== 'POST' : method !== 'GET' && method !== 'POST') return reply(res, 405, 'method not allowed\n');
  try {
    const pod = host.podByName(p.namespace, p.pod);
    if (!pod) throw new StreamError(404, 'pod does not exist');
    if (kind === 'run') {
      const id = p.uid === '' || p.uid === pod.metadata.uid ? await host.runningContainerId(pod, p.container) : undefined;
      if (!id) throw new StreamError(500, `container not found ("${p.container}")`);
      const out = await host.runInContainer(id, (query.get('cmd') ?? '').split(' ')).catch((err: unknown) => {
        throw new StreamError(500, errorMessage(err));
      });
      return out.length === 0 ? void res.end() : reply(res, 200, out, 'application/json');
    }
    const t0 = performance.now();
    const { url, streams } = await streamUrl(host, kind, p, pod, req, query).catch((err: unknown) => {
      throw fromRuntime(err);
    });
    if (!upgrade || !isUpgrade(req)) throw new StreamError(500, 'Upgrade request required');
    res.detachSocket(upgrade.socket as never);
    const t1 = performance.now();
    // kubectl ≥ 1.30's WebSocket v5 for exec and attach is translated here (v5-bridge.ts); all else is proxied as it is.
    const via = streams && isV5WebSocketRequest(req) ? 'websocket-v5-bridge' : 'proxy';
    if (streams && via === 'websocket-v5-bridge') {
      await bridgeV5(req, upgrade.socket, upgrade.head, new URL(url), streams, {
        idleTimeoutMs: host.idleTimeoutMs,
        onError: (err) => host.logger.error({ err: err.message, url }, 'Error while translating the stream to the runtime'),
        onIgnored: (reason) => v(host.logger, 4).info({ kind, reason }, 'Ignored a WebSocket message'),
      });
    } else {
      await proxyUpgrade(req, upgrade.socket, upgrade.head, new URL(url), {
        idleTimeoutMs: host.idleTimeoutMs,
        onError: (err) => host.logger.error({ err: err.message, url }, 'Error while proxying request'),
      });
    }
    v(host.logger, 4).info(
      { kind, via, pod: `${p.namespace}/${p.pod}`, runtimeMs: Math.round(t1 - t0), sessionMs: Math.round(performance.now() - t1) },
      'Streaming session ended',
    );
  } catch (err) {
    const e = err instanceof StreamError ? err : new StreamError(500, errorMessage(err));
    if (e.status >= 500)
      host.logger.info({ kind, pod: `${p.namespace}/${p.pod}`, container: p.container, err: e.message }, 'Streaming request failed');
    reply(res, e.status, e.message);
  }
}
