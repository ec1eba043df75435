import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiStatusError, ApiUnreachableError } from '../../src/common/errors.js';
import { TokenBucket } from '../../src/common/token-bucket.js';
import { isAlreadyExists, isConflict, isNotFound, RestClient, type RestClientOptions } from '../../src/main/apiserver/rest-client.js';
import { FakeClock } from '../fakes/fake-clock.js';

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
type Handler = (req: Seen, res: http.ServerResponse) => void;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A local apiserver stand-in on 127.0.0.1; `received` resolves with each request as it arrives. */
async function server(handler: Handler) {
  const requests: Seen[] = [];
  let arrived: (s: Seen) => void = () => undefined;
  const srv = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const seen = { method: req.method!, url: req.url!, headers: req.headers, body };
      requests.push(seen);
      arrived(seen);
      handler(seen, res);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    srv.closeAllConnections();
    srv.close();
  });
  return {
    port: (srv.address() as AddressInfo).port,
    requests,
    next: () => new Promise<Seen>((r) => (arrived = r)),
  };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
});

/** A kubeconfig built in code: plain http:// server (client-node requires skipTLSVerify for http), no credentials. */
function kubeConfig(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'ctx', cluster: 'local', user: 'anonymous' }],
    currentContext: 'ctx',
  });
  return kc;
}

function client(port: number, over: Partial<RestClientOptions> = {}) {
  const clock = new FakeClock();
  const observed: [string, string, string, number][] = [];
  const c = new RestClient({
    kubeConfig: kubeConfig(port),
    clock,
    limiter: new TokenBucket(0, 0, clock),
    timeoutMs: 5000,
    userAgent: 'kubelet-ts/test',
    observer: { request: (method, host, code, seconds) => void observed.push([method, host, code, seconds]) },
    ...over,
  });
  cleanups.push(() => c.closeIdleConnections());
  return { c, clock, observed };
}

describe('RestClient against a local HTTP server', () => {
  it('JSON round trip: POST body out, parsed object back, with accept and user-agent', async () => {
    const s = await server((req, res) => json(res, 201, { ...JSON.parse(req.body), metadata: { name: 'node1', uid: 'u-1' } }));
    const { c } = client(s.port);
    const out = await c.create<{ kind: string; metadata: { uid: string } }>('/api/v1/nodes', { kind: 'Node', metadata: { name: 'node1' } });
    expect(out).toEqual({ kind: 'Node', metadata: { name: 'node1', uid: 'u-1' } });
    const [req] = s.requests;
    expect([req.method, req.url]).toEqual(['POST', '/api/v1/nodes']);
    expect(req.headers).toMatchObject({ 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'kubelet-ts/test' });
    expect(JSON.parse(req.body)).toEqual({ kind: 'Node', metadata: { name: 'node1' } });
  });

  it('query parameters, with undefined ones left out', async () => {
    const s = await server((_req, res) => json(res, 200, {}));
    const { c } = client(s.port);
    await c.get('/api/v1/nodes/node1', { query: { resourceVersion: '0', limit: 5, watch: false, continue: undefined } });
    expect(s.requests[0].url).toBe('/api/v1/nodes/node1?resourceVersion=0&limit=5&watch=false');
  });

  it.each([
    ['strategic', 'application/strategic-merge-patch+json'],
    ['merge', 'application/merge-patch+json'],
    ['json', 'application/json-patch+json'],
  ] as const)('a %s patch is sent as %s', async (type, contentType) => {
    const s = await server((_req, res) => json(res, 200, { ok: true }));
    const { c } = client(s.port);
    expect(await c.patch('/api/v1/nodes/node1/status', { status: {} }, type)).toEqual({ ok: true });
    expect([s.requests[0].method, s.requests[0].headers['content-type']]).toEqual(['PATCH', contentType]);
  });

  it.each([
    ['replace', 'PUT'],
    ['delete', 'DELETE'],
  ] as const)('%s is %s', async (verb, method) => {
    const s = await server((_req, res) => json(res, 200, {}));
    const { c } = client(s.port);
    await (verb === 'replace' ? c.replace('/x', { a: 1 }) : c.delete('/x'));
    expect(s.requests[0].method).toBe(method);
  });

  it.each<{ code: number; body: unknown; reason: string; nf: boolean; conflict: boolean; exists: boolean }>([
    { code: 404, body: status(404, 'NotFound', 'nodes "x" not found'), reason: 'NotFound', nf: true, conflict: false, exists: false },
    {
      code: 409,
      body: status(409, 'Conflict', 'the object has been modified'),
      reason: 'Conflict',
      nf: false,
      conflict: true,
      exists: false,
    },
    {
      code: 409,
      body: status(409, 'AlreadyExists', 'nodes "x" already exists'),
      reason: 'AlreadyExists',
      nf: false,
      conflict: false,
      exists: true,
    },
    { code: 422, body: status(422, 'Invalid', 'Node "x" is invalid'), reason: 'Invalid', nf: false, conflict: false, exists: false },
    { code: 500, body: 'upstream connect error', reason: '', nf: false, conflict: false, exists: false },
  ])('$code $reason → ApiStatusError', async ({ code, body, reason, nf, conflict, exists }) => {
    const s = await server((_req, res) => (typeof body === 'string' ? (res.writeHead(code), res.end(body)) : json(res, code, body)));
    const { c, observed } = client(s.port);
    const err = await c.get('/api/v1/nodes/x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiStatusError);
    expect([(err as ApiStatusError).status, (err as ApiStatusError).reason]).toEqual([code, reason]);
    expect([isNotFound(err), isConflict(err), isAlreadyExists(err)]).toEqual([nf, conflict, exists]);
    if (typeof body === 'string') expect((err as Error).message).toContain(body);
    expect(observed).toEqual([['GET', `127.0.0.1:${s.port}`, String(code), 0]]);
  });

  it('no answer within the deadline → ApiUnreachableError, observed as <error>', async () => {
    const s = await server(() => undefined); // never answers
    const { c, clock, observed } = client(s.port);
    const arrived = s.next();
    const p = c.get('/api/v1/nodes/node1');
    let settled = false;
    p.catch(() => undefined).finally(() => (settled = true));
    await arrived;
    clock.step(4999);
    await new Promise<void>((r) => setImmediate(r));
    expect(settled).toBe(false);
    clock.step(1);
    await expect(p).rejects.toThrow(ApiUnreachableError);
    await expect(p).rejects.toThrow(/5000 ms/);
    expect(observed).toEqual([['GET', `127.0.0.1:${s.port}`, '<error>', 5]]);
  });

  it('a connection that is refused → ApiUnreachableError', async () => {
    const s = await server(() => undefined);
    for (const c of cleanups.splice(0)) c(); // close the server: its port now refuses
    const { c, observed } = client(s.port);
    await expect(c.get('/healthz')).rejects.toThrow(ApiUnreachableError);
    expect(observed.map((o) => o[2])).toEqual(['<error>']);
  });

  it('a response larger than maxResponseBytes → ApiUnreachableError', async () => {
    const s = await server((_req, res) => json(res, 200, { blob: 'x'.repeat(64 * 1024) }));
    const { c } = client(s.port, { maxResponseBytes: 1024 });
    await expect(c.get('/api/v1/nodes')).rejects.toThrow(ApiUnreachableError);
    await expect(c.get('/api/v1/nodes')).rejects.toThrow(/larger than 1024 bytes/);
    const { c: roomy } = client(s.port, { maxResponseBytes: 128 * 1024 });
    expect(await roomy.get('/api/v1/nodes')).toMatchObject({ blob: expect.any(String) as string });
  });

  it('aborting the signal fails the request with ApiUnreachableError', async () => {
    const s = await server(() => undefined);
    const { c } = client(s.port);
    const ac = new AbortController();
    const arrived = s.next();
    const p = c.get('/api/v1/nodes/node1', { signal: ac.signal });
    await arrived;
    ac.abort();
    await expect(p).rejects.toThrow(ApiUnreachableError);
  });

  it('every request takes a token from the limiter first', async () => {
    const s = await server((_req, res) => json(res, 200, {}));
    const clock = new FakeClock();
    const limiter = new TokenBucket(1, 1, clock);
    let takes = 0;
    const take = limiter.take.bind(limiter);
    limiter.take = (signal?: AbortSignal) => (takes++, take(signal));
    const { c } = client(s.port, { clock, limiter });
    await c.get('/a');
    expect([takes, s.requests.length]).toEqual([1, 1]);
    let second = false;
    const p = c.get('/b').then(() => (second = true));
    await new Promise<void>((r) => setImmediate(r));
    // The second request waits for its token (1 qps): not sent until the clock moves.
    expect([takes, second, clock.pendingTimers()]).toEqual([2, false, 1]);
    clock.step(1000);
    await p;
    expect([takes, s.requests.map((r) => r.url)]).toEqual([2, ['/a', '/b']]);
  });
});
