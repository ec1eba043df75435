/**
 * The healthz server (healthzBindAddress:healthzPort, 127.0.0.1:10248):
 * /healthz over plain HTTP, no authentication, as upstream. The main and
 * read-only servers are in ../server/kubelet-server.ts.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HealthCheck {
  name: string;
  check(): { ok: boolean; message: string };
}

/** upstream healthz: "ok", or per check with ?verbose (and on failure); 500 when a check fails. */
export function healthz(res: ServerResponse, checks: HealthCheck[], verbose: boolean): void {
  const results = checks.map((c) => ({ name: c.name, ...c.check() }));
  const failed = results.filter((r) => !r.ok);
  res.statusCode = failed.length ? 500 : 200;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  if (!verbose && !failed.length) return void res.end('ok');
  const lines = results.map((r) => `[${r.ok ? '+' : '-'}]${r.name} ${r.ok ? 'ok' : `failed: ${r.message}`}`);
  res.end(`${lines.join('\n')}\nhealthz check ${failed.length ? 'failed' : 'passed'}\n`);
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

export async function startHealthzServer(host: string, port: number, checks: HealthCheck[]): Promise<Server> {
  return serve(host, port, (path, query, res) => {
    if (path === '/healthz') return healthz(res, checks, query.has('verbose'));
    res.statusCode = 404;
    res.end('not found\n');
  });
}

export function boundPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}
