import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/common/clock.js';
import { resolveContainerPort } from '../../src/handlers/container-port.js';
import { canonicalHeaderName, HttpGetError, httpGet, newRequestForHttpGetAction } from '../../src/handlers/http-get.js';

describe('resolveContainerPort (upstream probe.ResolveContainerPort)', () => {
  const c = {
    ports: [
      { name: 'http', containerPort: 8080 },
      { name: 'big', containerPort: 70000 },
    ],
  };
  it.each([
    [80, 80],
    ['http', 8080],
    ['9090', 9090],
  ])('%s → %s', (port, want) => expect(resolveContainerPort(port, c)).toBe(want));
  it.each([
    ['web', 'strconv.Atoi: parsing "web": invalid syntax'],
    [0, 'invalid port number: 0'],
    ['big', 'invalid port number: 70000'],
    [65536, 'invalid port number: 65536'],
  ])('%s is an error: %s', (port, msg) => expect(() => resolveContainerPort(port, c)).toThrow(msg));
});

describe('newRequestForHttpGetAction', () => {
  const container = { ports: [{ name: 'web', containerPort: 8080 }] };
  it('defaults: http, pod IP, path as given, kube-probe user agent, Accept any', () => {
    const r = newRequestForHttpGetAction({ port: 'web', path: '/healthz?x=1' }, container, '10.1.2.3', 'probe');
    expect(r.url.href).toBe('http://10.1.2.3:8080/healthz?x=1');
    expect(r.headers).toEqual({ 'User-Agent': ['kube-probe/1.20'], Accept: ['*/*'] });
  });
  it('host, scheme, IPv6, headers canonicalised and repeated, an empty Accept removes it', () => {
    const r = newRequestForHttpGetAction(
      {
        port: 443,
        host: 'fd00::1',
        scheme: 'HTTPS',
        path: 'ready',
        httpHeaders: [
          { name: 'x-custom', value: 'a' },
          { name: 'X-Custom', value: 'b' },
          { name: 'accept', value: '' },
          { name: 'user-agent', value: 'mine' },
        ],
      },
      container,
      '10.1.2.3',
      'lifecycle',
    );
    expect(r.url.href).toBe('https://[fd00::1]/ready');
    expect(r.headers).toEqual({ 'X-Custom': ['a', 'b'], 'User-Agent': ['mine'] });
  });
  it('lifecycle requests say kube-lifecycle', () => {
    expect(newRequestForHttpGetAction({ port: 80 }, container, '10.0.0.1', 'lifecycle').headers['User-Agent']).toEqual([
      'kube-lifecycle/1.20',
    ]);
  });
  it.each([
    ['content-type', 'Content-Type'],
    ['X-FORWARDED-FOR', 'X-Forwarded-For'],
    ['host', 'Host'],
  ])('canonicalHeaderName(%s) = %s', (a, b) => expect(canonicalHeaderName(a)).toBe(b));
});

describe('httpGet against a local server', () => {
  let server: Server;
  let port = 0;
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/ok') return void res.end('fine');
      if (u.pathname === '/big') return void res.end('x'.repeat(50_000));
      if (u.pathname === '/teapot') return void ((res.statusCode = 418), res.end('short and stout'));
      if (u.pathname === '/local') return void (res.writeHead(302, { location: '/ok' }), res.end());
      if (u.pathname === '/away') return void (res.writeHead(301, { location: `http://localhost:${port}/ok` }), res.end('moved'));
      if (u.pathname === '/loop') return void (res.writeHead(302, { location: '/loop' }), res.end());
      if (u.pathname === '/slow') return; // never answers
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const req = (path: string) =>
    newRequestForHttpGetAction({ port, path, httpHeaders: [{ name: 'Host', value: 'svc.local' }] }, {}, '127.0.0.1', 'probe');
  const probe = { clock: realClock, timeoutMs: 2000, followNonLocalRedirects: false };

  it('reads the status and at most 10 KiB of body; sends the headers', async () => {
    expect(await httpGet(req('/ok'), probe)).toEqual({ statusCode: 200, body: 'fine' });
    const last = seen.at(-1)!;
    expect(last.headers.host).toBe('svc.local');
    expect(last.headers['user-agent']).toBe('kube-probe/1.20');
    expect(last.headers.connection).toBe('close');
    expect((await httpGet(req('/big'), probe)).body).toHaveLength(10 * 1024);
    expect(await httpGet(req('/teapot'), probe)).toEqual({ statusCode: 418, body: 'short and stout' });
  });

  it('follows a redirect to the same host; stops at one to another host (probes) or follows it (lifecycle)', async () => {
    expect(await httpGet(req('/local'), probe)).toEqual({ statusCode: 200, body: 'fine' });
    expect(await httpGet(req('/away'), probe)).toEqual({ statusCode: 301, body: 'moved' });
    expect(await httpGet(req('/away'), { ...probe, followNonLocalRedirects: true })).toEqual({ statusCode: 200, body: 'fine' });
  });

  it('errors in Go wording: redirect loop, timeout, refused', async () => {
    await expect(httpGet(req('/loop'), probe)).rejects.toThrow(`Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects`);
    await expect(httpGet(req('/slow'), { ...probe, timeoutMs: 200 })).rejects.toThrow(
      `Get "http://127.0.0.1:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    );
    const closed = newRequestForHttpGetAction({ port: 1, path: '/' }, {}, '127.0.0.1', 'probe');
    const err = await httpGet(closed, probe).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpGetError);
    expect((err as Error).message).toBe('Get "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused');
  });
});
