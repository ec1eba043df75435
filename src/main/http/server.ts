/**
 * The healthz server (healthzBindAddress:healthzPort, 127.0.0.1:10248), plain
 * HTTP without authentication as upstream, and the /healthz handler the
 * kubelet and read-only servers share (../server/kubelet-server.ts).
 * /healthz runs upstream's checks (ping, log, syncloop) and answers as
 * k8s.io/apiserver healthz does: `ok`, or with ?verbose one `[+]name ok`
 * line per check; a failure is a 500 whose body withholds the reason (it is
 * logged); /healthz/<name> runs one check.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { ListenError } from '../../common/errors.js';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../../common/error-message.js';

export interface HealthCheck {
  name: string;
  check(): { ok: boolean; message: string };
}

/** Called with each failed check and its reason (the HTTP response withholds it). */
export type HealthFailureLog = (name: string, reason: string) => void;

function healthz(res: ServerResponse, checks: HealthCheck[], verbose: boolean, onFailure?: HealthFailureLog): void {
  const results = checks.map((c) => ({ name: c.name, ...c.check() }));
  const failed = results.filter((r) => !r.ok);
  for (const f of failed) onFailure?.(f.name, f.message);
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.setHeader('x-content-type-options', 'nosniff');
  const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`)).join('\n');
  if (failed.length) {
    res.statusCode = 500;
    return void res.end(`${lines}\nhealthz check failed\n`);
  }
  res.statusCode = 200;
  res.end(verbose ? `${lines}\nhealthz check passed\n` : 'ok');
}

/** /healthz/<name>: one check, upstream adaptCheckToHandler. */
function healthzOne(res: ServerResponse, check: HealthCheck): void {
  const r = check.check();
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.statusCode = r.ok ? 200 : 500;
  res.end(r.ok ? 'ok' : `internal server error: ${r.message}\n`);
}

/** Routes /healthz and /healthz/<name>; false when `path` is neither. */
export function routeHealthz(
  path: string,
  query: URLSearchParams,
  res: ServerResponse,
  checks: HealthCheck[],
  onFailure?: HealthFailureLog,
): boolean {
  if (path === '/healthz') {
    healthz(res, checks, query.has('verbose'), onFailure);
    return true;
  }
  const one = path.startsWith('/healthz/') ? checks.find((c) => `/healthz/${c.name}` === path) : undefined;
  if (!one) return false;
  healthzOne(res, one);
  return true;
}

function serve(
  host: string,
  port: number,
  routes: (path: string, query: URLSearchParams, res: ServerResponse) => Promise<void> | void,
): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      return void res.end('method not allowed\n');
    }
    Promise.resolve(routes(url.pathname, url.searchParams, res)).catch((err) => {
      res.statusCode = 500;
      res.end(`internal error: ${errorMessage(err)}\n`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

export async function startHealthzServer(host: string, port: number, checks: HealthCheck[], onFailure?: HealthFailureLog): Promise<Server> {
  return serve(host, port, (path, query, res) => {
    if (routeHealthz(path, query, res, checks, onFailure)) return;
    res.statusCode = 404;
    res.end('not found\n');
  });
}

export interface RetryingServer {
  /** The server once it listens; undefined before. */
  current(): Server | undefined;
  close(): Promise<void>;
}

/**
 * Upstream's healthz server: a failure to listen (a port in use) is logged
 * and retried every `retryMs` until it works or `signal` aborts; it never
 * stops the agent.
 */
export function startHealthzServerRetrying(o: {
  host: string;
  port: number;
  checks: HealthCheck[];
  onFailure?: HealthFailureLog;
  clock: Clock;
  logger: Logger;
  signal: AbortSignal;
  retryMs?: number;
}): RetryingServer {
  let server: Server | undefined;
  let cancel = () => {};
  const attempt = () => {
    if (o.signal.aborted) return;
    startHealthzServer(o.host, o.port, o.checks, o.onFailure).then(
      (s) => {
        if (o.signal.aborted) s.close();
        else server = s;
      },
      (err: NodeJS.ErrnoException) => {
        const e = listenError('healthz server', o.host, o.port, '--healthz-port / healthzPort', err);
        o.logger.error({ err: e.message, retryInMs: o.retryMs ?? 5_000 }, 'Failed to start healthz server');
        cancel = o.clock.setTimer(o.retryMs ?? 5_000, attempt);
      },
    );
  };
  attempt();
  return {
    current: () => server,
    close: () => {
      cancel();
      const s = server;
      return s ? new Promise<void>((r) => s.close(() => r())) : Promise.resolve();
    },
  };
}

export function boundPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/** A listen failure as an operator reads it: what, where, which setting, and the likely cause. */
export function listenError(what: string, host: string, port: number, setting: string, err: NodeJS.ErrnoException): ListenError {
  const hint =
    err.code === 'EADDRINUSE'
      ? 'the port is already in use (another kubelet running?): stop it or choose another port'
      : err.code === 'EACCES'
        ? 'permission denied (ports below 1024 need root)'
        : err.code === 'EADDRNOTAVAIL'
          ? 'the address is not one of this host'
          : err.message;
  return new ListenError(`cannot serve the ${what} on ${host}:${port} (${setting}): ${hint}`, { cause: err });
}
