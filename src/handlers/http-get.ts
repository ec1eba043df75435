/**
 * The httpGet action, shared by probes and lifecycle hooks (upstream
 * pkg/probe/http request.go NewRequestForHTTPGetAction and the probe's HTTP
 * client). One request builder and one client:
 *
 * - URL: scheme (lower-cased, default http), the action's host or else the
 *   pod IP, the resolved port (named ports too), the path as written (a query
 *   string in it is kept).
 * - Headers: the action's headers (names canonicalised as Go's http.Header
 *   does; repeated names send several lines); `User-Agent: kube-<purpose>/<v>`
 *   and an any-type `Accept` unless set (an empty Accept removes it); a `Host` header
 *   replaces the request's host.
 * - Client: no proxy, no keep-alive, TLS without certificate verification,
 *   no compression. Redirects: probes follow only redirects to the same host
 *   (upstream RedirectChecker(false)); a redirect elsewhere ends the exchange
 *   with that 3xx response. Lifecycle hooks follow any redirect (Go's default
 *   client). At most 10 redirects.
 * - The response body is read up to 10 KiB; then the connection is closed
 *   (upstream also shortens TIME_WAIT with SO_LINGER 1 s; Node has no
 *   SO_LINGER, so a closed probe connection may sit in TIME_WAIT).
 *
 * Errors are HttpGetError with Go's url.Error wording (`Get "<url>": dial tcp
 * <addr>: connect: connection refused`); they reach events and probe output.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Container, HTTPGetAction } from '../api/pod.js';
import type { Clock } from '../common/clock.js';
import { UPSTREAM_MAJOR_MINOR } from '../common/upstream-version.js';
import { joinHostPort, resolveContainerPort } from './container-port.js';
import { errorMessage } from '../common/error-message.js';

/** upstream maxRespBodyLength */
export const MAX_RESPONSE_BODY_BYTES = 10 * 1024;
const MAX_REDIRECTS = 10;
const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

export interface HttpGetRequest {
  url: URL;
  /** Canonical header name → values, in the order they were given. */
  headers: Record<string, string[]>;
}

export interface HttpGetResponse {
  statusCode: number;
  /** The first MAX_RESPONSE_BODY_BYTES of the body. */
  body: string;
}

export class HttpGetError extends Error {
  override readonly name = 'HttpGetError';
}

/** Go's textproto.CanonicalMIMEHeaderKey for the usual token characters: "x-custom-header" → "X-Custom-Header". */
export function canonicalHeaderName(name: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/** Upstream NewRequestForHTTPGetAction. Throws when the port cannot be resolved. */
export function newRequestForHttpGetAction(
  action: HTTPGetAction,
  container: Pick<Container, 'ports'>,
  podIP: string,
  purpose: 'probe' | 'lifecycle',
): HttpGetRequest {
  const scheme = (action.scheme ?? 'HTTP').toLowerCase() || 'http';
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port, container);
  const path = action.path ?? '';
  let url: URL;
  try {
    url = new URL(`${scheme}://${joinHostPort(host, port)}${path.startsWith('/') || path === '' ? path : `/${path}`}`);
  } catch {
    url = new URL(`${scheme}://${joinHostPort(host, port)}/`);
    url.pathname = path;
  }
  const headers: Record<string, string[]> = {};
  for (const h of action.httpHeaders ?? []) (headers[canonicalHeaderName(h.name)] ??= []).push(h.value);
  if (!('User-Agent' in headers)) headers['User-Agent'] = [`kube-${purpose}/${UPSTREAM_MAJOR_MINOR}`];
  if (!('Accept' in headers)) headers.Accept = ['*/*'];
  else if (headers.Accept[0] === '') delete headers.Accept;
  return { url, headers };
}

export interface HttpGetOptions {
  clock: Clock;
  /** Deadline of the whole exchange, redirects included; undefined = none. */
  timeoutMs?: number;
  /** Follow redirects to other hosts too (lifecycle hooks); probes follow same-host redirects only. */
  followNonLocalRedirects: boolean;
  signal?: AbortSignal;
}

/** Node's error codes in Go's net error wording. */
function goNetError(err: NodeJS.ErrnoException, hostPort: string, host: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${hostPort}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${hostPort}: connect: network is unreachable`;
    case 'ECONNRESET':
      return `read tcp ${hostPort}: read: connection reset by peer`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${host}: no such host`;
    default:
      return err.message;
  }
}

interface Exchange {
  res: IncomingMessage;
  socket: Socket;
}

function once(url: URL, headers: Record<string, string[]>, signal: AbortSignal): Promise<Exchange> {
  const mod = url.protocol === 'https:' ? https : http;
  const outgoing: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) outgoing[k] = v.length === 1 ? v[0] : v;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method: 'GET', headers: outgoing, agent: false, rejectUnauthorized: false, signal });
    req.once('response', (res) => resolve({ res, socket: res.socket }));
    req.once('error', reject);
    req.end();
  });
}

function readBody(res: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).subarray(0, limit).toString());
    res.on('data', (c: Buffer) => {
      if (size >= limit) return;
      chunks.push(c);
      size += c.length;
      if (size >= limit) done();
    });
    res.once('end', done);
    res.once('error', reject);
  });
}

/**
 * Ends the connection. Not with an RST (socket.resetAndDestroy): in Node 20
 * that can leave a worker thread's Worker.terminate() hanging for ever.
 */
function closeHard(socket: Socket | null | undefined): void {
  if (socket && !socket.destroyed) socket.destroy();
}

/** Performs the GET. Resolves with any status code; rejects with HttpGetError. */
export async function httpGet(request: HttpGetRequest, opts: HttpGetOptions): Promise<HttpGetResponse> {
  const controller = new AbortController();
  let timedOut = false;
  let headersIn = false;
  const cancelTimer =
    opts.timeoutMs !== undefined
      ? opts.clock.setTimer(opts.timeoutMs, () => {
          timedOut = true;
          controller.abort();
        })
      : () => {};
  const onAbort = () => controller.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const first = request.url;
  let url = first;
  const headers = { ...request.headers };
  let socket: Socket | undefined;
  try {
    for (let redirects = 0; ; redirects++) {
      let ex: Exchange;
      try {
        ex = await once(url, headers, controller.signal);
      } catch (err) {
        if (timedOut)
          throw new HttpGetError(`Get "${url.href}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
        if (opts.signal?.aborted) throw new HttpGetError(`Get "${url.href}": context canceled`);
        throw new HttpGetError(`Get "${url.href}": ${goNetError(err as NodeJS.ErrnoException, url.host, url.hostname)}`);
      }
      headersIn = true;
      socket = ex.socket;
      const status = ex.res.statusCode ?? 0;
      const location = ex.res.headers.location;
      if (REDIRECT_CODES.has(status) && location) {
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new HttpGetError(`Get "${url.href}": failed to parse Location header ${JSON.stringify(location)}`);
        }
        const sameHost = next.hostname === first.hostname;
        if (opts.followNonLocalRedirects || sameHost) {
          if (redirects + 1 > MAX_REDIRECTS) throw new HttpGetError(`Get "${next.href}": stopped after ${MAX_REDIRECTS} redirects`);
          ex.res.resume();
          closeHard(socket);
          // A Host override survives only a relative redirect (Go's client).
          if (headers.Host && /^[a-z][a-z0-9+.-]*:/i.test(location)) delete headers.Host;
          url = next;
          continue;
        }
      }
      let body: string;
      try {
        body = await readBody(ex.res, MAX_RESPONSE_BODY_BYTES);
      } catch {
        throw new HttpGetError(
          timedOut
            ? `Get "${url.href}": context deadline exceeded (Client.Timeout or context cancellation while reading body)`
            : `Get "${url.href}": unexpected EOF`,
        );
      }
      return { statusCode: status, body };
    }
  } catch (err) {
    if (err instanceof HttpGetError) throw err;
    throw new HttpGetError(`Get "${url.href}": ${headersIn ? 'error reading response' : errorMessage(err)}`);
  } finally {
    cancelTimer();
    opts.signal?.removeEventListener('abort', onAbort);
    closeHard(socket);
  }
}
