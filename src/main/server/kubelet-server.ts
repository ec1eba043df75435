/**
 * The kubelet server on `port` (10250) and the read-only server on
 * `readOnlyPort` (upstream pkg/kubelet/server).
 *
 * Main server: HTTPS (serving-cert.ts); with authentication.x509.clientCAFile
 * the client may present a certificate, and one the CA did not sign ends the
 * connection right after the handshake (no HTTP answer; upstream's Go server
 * would answer 401 instead). Every request is authenticated (authenticator.ts,
 * 401 "Unauthorized") and authorized for its node attributes (authorizer.ts,
 * 403 "Forbidden (user=…, verb=…, resource=…, subresource=…)", 500 when the
 * authorizer fails), then routed. Routes: the default ones (/healthz, /pods,
 * /stats/summary, /metrics, /metrics/probes, /metrics/resource) and the
 * debugging ones (/containerLogs/, /logs/, /runningpods/, /configz, and the
 * streaming ones /exec/, /attach/, /portForward/, /run/ of streaming.ts).
 * An upgrade request (the server's 'upgrade' event) goes through the same
 * authentication, authorization and routing; only the streaming routes take
 * the connection over, any other answer closes it. The server's
 * closeAllConnections() also ends the streaming sessions (Node's own leaves
 * upgraded connections open, and close() would wait for them).
 *
 * Read-only server: plain HTTP, no authentication, default routes only.
 *
 * Paths are decoded and cleaned first; a request whose path was not clean is
 * redirected to the clean one (Go's ServeMux), so `/logs/../x` never reaches
 * /logs/. Every request counts in kubelet_http_requests_total and is in
 * kubelet_http_inflight_requests while it runs.
 */
import { createServer as createHttpServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { DropArgument, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createServer as createHttpsServer } from 'node:https';
import { realClock } from '../../common/clock.js';
import { FailureLog } from '../../common/failure-log.js';
import { posix } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { v } from '../../common/logger.js';
import { routeDebug, type DebugHost } from './debug-handlers.js';
import { listenError, routeHealthz, type HealthCheck, type HealthFailureLog } from '../http/server.js';
import type { RequestAuthenticator } from './authenticator.js';
import type { Authorizer } from './authorizer.js';
import { serveContainerLogs, type ContainerLogsHost } from './container-logs.js';
import { jsonListChunks } from './json-list.js';
import type { HttpMetrics } from './http-metrics.js';
import { serveNodeLogs } from './node-logs.js';
import { nodeRequestAttributes } from './request-attributes.js';
import { serveStreaming, type StreamKind, type StreamingHost } from './streaming.js';
import { errorMessage } from '../../common/error-message.js';

export interface ServerHandlers {
  registry: Registry;
  checks: HealthCheck[];
  onHealthFailure?: HealthFailureLog;
  /** PodList of the pods the kubelet manages, with their statuses. */
  pods(): unknown;
  /** PodList of the pods with running containers, as the runtime reports them. */
  runningPods(): unknown;
  probeMetrics(): Promise<string>;
  resourceMetrics(): Promise<string>;
  /** The Summary as JSON text (uint64 values exact). */
  statsSummary(onlyCpuAndMemory: boolean): Promise<string>;
  configz(): unknown;
  containerLogs: ContainerLogsHost;
  /** exec, attach, port-forward and run; absent: those paths are 404. */
  streaming?: StreamingHost;
  /** Directory served under /logs/ (upstream /var/log/). */
  nodeLogDir: string;
}

export interface ServerAuth {
  authenticator: RequestAuthenticator;
  authorizer: Authorizer;
  nodeName: string;
}

export interface KubeletServerOptions {
  host: string;
  port: number;
  handlers: ServerHandlers;
  metrics: HttpMetrics;
  logger: Logger;
  /** HTTPS with this certificate chain and key; the client CA bundle enables client certificates. */
  tls?: { cert: string; key: string; clientCA?: string };
  /** Required for the main server; absent for the read-only server. */
  auth?: ServerAuth;
  /** enableDebuggingHandlers and the switches under it (default: all on). */
  debugging?: DebuggingSwitches;
  /** What /debug/flags/v and /debug/pprof act on; absent: no /debug routes. */
  debug?: DebugHost;
  /** Bounds on what clients may hold (default SERVER_LIMITS). */
  limits?: Partial<ServerLimits>;
}

/**
 * What one client can hold of the server, in count and time. Upstream's Go
 * server sets only MaxHeaderBytes (1 MiB); Node's defaults would let a TLS
 * handshake hang for 120 s and headers trickle for 60 s, with no bound on the
 * number of such connections (each an open descriptor of the agent).
 */
export interface ServerLimits {
  /** Open connections; past it a new one is closed at once. */
  maxConnections: number;
  /** A TLS handshake not done within this is dropped. */
  handshakeTimeoutMs: number;
  /** The request line and headers must arrive within this (Node checks every checkIntervalMs). */
  headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this; a streaming response is not bounded by it. */
  requestTimeoutMs: number;
  checkIntervalMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
}

export const SERVER_LIMITS: ServerLimits = {
  maxConnections: 1024,
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 60_000,
  checkIntervalMs: 5_000,
  keepAliveTimeoutMs: 90_000,
};

/** KubeletConfiguration enableDebuggingHandlers, enableSystemLogHandler, enableProfilingHandler, enableDebugFlagsHandler. */
export interface DebuggingSwitches {
  handlers: boolean;
  systemLogs: boolean;
  profiling: boolean;
  flags: boolean;
}

/** Paths upstream installs with InstallDebuggingHandlers. */
function isDebuggingPath(path: string): boolean {
  return (
    path === '/runningpods' ||
    path === '/runningpods/' ||
    path === '/configz' ||
    path === '/logs' ||
    path.startsWith('/logs/') ||
    path.startsWith('/containerLogs/') ||
    path.startsWith('/debug/') ||
    streamKind(path) !== undefined
  );
}

const STREAM_PREFIXES: readonly [string, StreamKind][] = [
  ['/exec/', 'exec'],
  ['/attach/', 'attach'],
  ['/portForward/', 'portForward'],
  ['/run/', 'run'],
];

function streamKind(path: string): StreamKind | undefined {
  return STREAM_PREFIXES.find(([prefix]) => path.startsWith(prefix))?.[1];
}

/** The connection of an upgrade request and the bytes read past its headers. */
interface Upgrade {
  socket: Duplex;
  head: Buffer;
}

const PROM_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

function send(res: ServerResponse, status: number, body: string | Buffer, type = 'text/plain; charset=utf-8'): void {
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.end(body);
}

/** A 200 whose body is `chunks`, written as they are: one gathered write, no joined copy. */
function sendChunks(res: ServerResponse, chunks: Buffer[], type: string): void {
  let length = 0;
  for (const c of chunks) length += c.length;
  res.statusCode = 200;
  res.setHeader('content-type', type);
  res.setHeader('content-length', length);
  res.cork();
  for (const c of chunks) res.write(c);
  res.end();
}

const sendJson = (res: ServerResponse, body: unknown) => send(res, 200, JSON.stringify(body), 'application/json');

/** The JSON of /pods items already sent (they are the same objects until their pod or status changes). */
const podItemJson = new WeakMap<object, Buffer>();

/** Go's path.Clean of the decoded URL path, keeping a trailing slash (ServeMux does). */
export function cleanPath(decoded: string): string {
  let p = posix.normalize(`/${decoded}`);
  if (p !== '/' && p.endsWith('/') === false && decoded.endsWith('/')) p += '/';
  return p.replace(/\/{2,}/g, '/');
}

/** The route for a clean path, or undefined (404). Default routes are on both servers; debugging ones need auth. */
async function route(
  options: KubeletServerOptions,
  method: string,
  path: string,
  query: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
  upgrade?: Upgrade,
): Promise<boolean> {
  const h = options.handlers;
  const readOnly = !options.auth;
  if (routeHealthz(path, query, res, h.checks, h.onHealthFailure)) return true;
  const dbg = options.debugging ?? { handlers: true, systemLogs: true, profiling: true, flags: true };
  if (!readOnly && path.startsWith('/debug/')) {
    if (!dbg.handlers) return (send(res, 405, 'Debug endpoints are disabled.\n'), true);
    return options.debug ? routeDebug(options.debug, dbg, method, path, query, req, res, signal) : false;
  }
  if (method !== 'GET' && method !== 'HEAD' && !(streamKind(path) && !readOnly)) {
    send(res, 405, 'method not allowed\n');
    return true;
  }
  switch (path) {
    case '/pods':
    case '/pods/':
      sendChunks(res, jsonListChunks(h.pods(), podItemJson), 'application/json');
      return true;
    case '/metrics':
      send(res, 200, await h.registry.metrics(), h.registry.contentType);
      return true;
    case '/metrics/probes':
      send(res, 200, await h.probeMetrics(), PROM_TEXT);
      return true;
    case '/metrics/resource':
      send(res, 200, await h.resourceMetrics(), PROM_TEXT);
      return true;
    case '/stats/summary':
    case '/stats/summary/':
      send(res, 200, await h.statsSummary(query.get('only_cpu_and_memory') === 'true'), 'application/json');
      return true;
  }
  if (readOnly) return false;
  if (isDebuggingPath(path) && !dbg.handlers) {
    // Upstream InstallDebuggingDisabledHandlers.
    send(res, 405, 'Debug endpoints are disabled.\n');
    return true;
  }
  const stream = streamKind(path);
  if (stream && h.streaming) {
    const parts = path.slice(path.indexOf('/', 1) + 1).split('/');
    await serveStreaming(h.streaming, stream, parts, query, req, res, upgrade);
    return true;
  }
  if (path === '/runningpods/' || path === '/runningpods') {
    sendJson(res, h.runningPods());
    return true;
  }
  if (path === '/configz') {
    sendJson(res, { kubeletconfig: h.configz() });
    return true;
  }
  if (path.startsWith('/containerLogs/')) {
    await serveContainerLogs(h.containerLogs, path.slice('/containerLogs/'.length).split('/'), query, res, signal);
    return true;
  }
  if ((path === '/logs' || path.startsWith('/logs/')) && dbg.systemLogs) {
    const rel = path.slice('/logs/'.length).replace(/\/$/, '');
    if (path === '/logs') {
      res.statusCode = 301;
      res.setHeader('location', '/logs/');
      res.end();
      return true;
    }
    await serveNodeLogs(h.nodeLogDir, rel, path.endsWith('/'), res);
    return true;
  }
  return false;
}

async function handle(
  options: KubeletServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
  upgrade?: Upgrade,
): Promise<void> {
  const method = req.method ?? 'GET';
  const url = new URL(req.url ?? '/', 'http://kubelet');
  let decoded: string;
  try {
    decoded = decodeURIComponent(url.pathname);
  } catch {
    return send(res, 400, 'invalid URL escape\n');
  }
  const path = cleanPath(decoded);
  if (path !== decoded) {
    // Go's ServeMux: redirect to the clean path rather than serve an unclean one.
    res.statusCode = 301;
    res.setHeader('location', encodeURI(path) + url.search);
    return void res.end();
  }
  if (options.auth) {
    const authn = await options.auth.authenticator.authenticate(req);
    if (!authn.ok) {
      v(options.logger, 2).info({ path, reason: authn.reason }, 'Unauthorized request');
      return send(res, 401, 'Unauthorized');
    }
    const attrs = nodeRequestAttributes(method, path, options.auth.nodeName);
    const user = authn.user.name;
    const what = `user=${user}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource}`;
    let allowed: boolean;
    try {
      allowed = (await options.auth.authorizer.authorize(authn.user, attrs)).allowed;
    } catch (err) {
      options.logger.error({ err: errorMessage(err), user, verb: attrs.verb, subresource: attrs.subresource }, 'Authorization error');
      return send(res, 500, `Authorization error (${what})`);
    }
    if (!allowed) {
      v(options.logger, 2).info({ user, verb: attrs.verb, resource: attrs.resource, subresource: attrs.subresource }, 'Forbidden');
      return send(res, 403, `Forbidden (${what})`);
    }
  }
  if (!(await route(options, method, path, url.searchParams, req, res, signal, upgrade))) send(res, 404, '404 page not found\n');
}

/**
 * The 'upgrade' event: the request is handled as any other, with a response
 * written on its connection; a streaming route takes the connection over, and
 * any other answer closes it once written.
 */
function onUpgrade(
  options: KubeletServerOptions,
  serverType: 'readonly' | 'readwrite',
  upgraded: Set<Duplex>,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  upgraded.add(socket);
  const done = options.metrics.start(req.method ?? 'GET', (req.url ?? '/').split('?')[0], serverType);
  const res = new ServerResponse(req);
  // Any answer but a streaming session closes the connection; say so, or a keep-alive client reuses it.
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => socket.end());
  const ac = new AbortController();
  socket.once('close', () => {
    upgraded.delete(socket);
    ac.abort();
    done();
  });
  socket.on('error', () => socket.destroy());
  handle(options, req, res, ac.signal, { socket, head }).catch((err: unknown) => {
    options.logger.error({ err: errorMessage(err), path: req.url }, 'Request failed');
    if (!res.headersSent) send(res, 500, `internal error: ${errorMessage(err)}\n`);
    else socket.destroy();
  });
}

export function startKubeletServer(options: KubeletServerOptions): Promise<Server> {
  const serverType = options.auth ? 'readwrite' : 'readonly';
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const done = options.metrics.start(req.method ?? 'GET', (req.url ?? '/').split('?')[0], serverType);
    const ac = new AbortController();
    res.once('close', () => {
      ac.abort();
      done();
    });
    handle(options, req, res, ac.signal).catch((err: unknown) => {
      options.logger.error({ err: errorMessage(err), path: req.url }, 'Request failed');
      if (!res.headersSent) send(res, 500, `internal error: ${errorMessage(err)}\n`);
      else res.end();
    });
  };
  let server: Server;
  const limits = { ...SERVER_LIMITS, ...options.limits };
  const timeouts = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
  };
  if (options.tls) {
    server = createHttpsServer(
      {
        ...timeouts,
        handshakeTimeout: limits.handshakeTimeoutMs,
        cert: options.tls.cert,
        key: options.tls.key,
        ...(options.tls.clientCA ? { ca: options.tls.clientCA, requestCert: true, rejectUnauthorized: false } : {}),
      },
      listener,
    );
    if (options.tls.clientCA) {
      // A certificate was presented but does not verify against the client CA: no HTTP exchange at all.
      server.on('secureConnection', (socket: TLSSocket) => {
        if (socket.authorized) return;
        const peer = socket.getPeerCertificate();
        if (peer && Object.keys(peer).length > 0) {
          v(options.logger, 2).info({ reason: socket.authorizationError, subject: peer.subject?.CN }, 'Rejected a client certificate');
          socket.destroy();
        }
      });
    }
  } else {
    server = createHttpServer(timeouts, listener);
  }
  server.maxConnections = limits.maxConnections;
  // One line per 30 s however many are dropped (a flood would otherwise be one line per connection).
  const drops = new FailureLog(
    options.logger,
    realClock,
    `Accepting a connection on ${options.auth ? 'the kubelet' : 'the read-only'} server`,
  );
  server.on('drop', (d?: DropArgument) =>
    drops.failure(`over the limit of ${limits.maxConnections} open connections; closed at once`, { remote: d?.remoteAddress }),
  );
  if (options.auth) {
    const upgraded = new Set<Duplex>();
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      onUpgrade(options, serverType, upgraded, req, socket, head),
    );
    const closeHttp = server.closeAllConnections.bind(server);
    server.closeAllConnections = () => {
      closeHttp();
      for (const s of upgraded) s.destroy();
    };
  }
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) =>
      reject(
        options.auth
          ? listenError('kubelet server', options.host, options.port, '--port / port', err)
          : listenError('read-only server', options.host, options.port, '--read-only-port / readOnlyPort', err),
      );
    server.once('error', failed);
    server.listen(options.port, options.host, () => {
      server.off('error', failed);
      resolve(server);
    });
  });
}
