/**
 * The healthz server (healthzBindAddress:healthzPort, 127.0.0.1:10248), plain
 * HTTP without authentication as upstream, and the /healthz handler the
 * kubelet and read-only servers share (../server/kubelet-server.ts).
 * /healthz runs upstream's checks (ping, log, syncloop) and answers as
 * k8s.io/apiserver healthz does: `ok`, or with ?verbose one `[+]name ok`
 * line per check; a failure is a 500 whose body withholds the reason (it is
 * logged); /healthz/<name> runs one check.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
      res.end(`internal error: ${String(err)}\n`);
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

export function boundPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}
