/**
 * The kubelet server on real sockets with fake handlers: TLS, client
 * certificates, bearer tokens, authorization, the node log directory,
 * container logs, request metrics and the read-only server.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod, PodStatus } from '../../src/api/pod.js';
import { realClock } from '../../src/common/clock.js';
import { RequestAuthenticator, type TokenReviewResult, type UserInfo } from '../../src/main/server/authenticator.js';
import { WebhookAuthorizer } from '../../src/main/server/authorizer.js';
import { httpMetrics } from '../../src/main/server/http-metrics.js';
import { startKubeletServer, type ServerHandlers } from '../../src/main/server/kubelet-server.js';
import type { NodeRequestAttributes } from '../../src/main/server/request-attributes.js';
import { loadServingCert } from '../../src/main/server/serving-cert.js';
import { makePki, type Pki } from '../helpers/pki.js';
import { pollUntil } from '../helpers/poll.js';

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

describe('kubelet server', () => {
  let dir: string;
  let pki: Pki;
  let foreign: Pki;
  let main: Server;
  let readOnly: Server;
  let logDir: string;
  const registry = new Registry();
  const reviews: string[] = [];
  const accessReviews: { user: UserInfo; attrs: NodeRequestAttributes }[] = [];
  const logFile = () => join(dir, 'pods', 'web.log');
  let running = true;

  const pod: Pod = {
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'app' }] },
  };
  const status: PodStatus = {
    containerStatuses: [
      {
        name: 'app',
        containerID: 'containerd://cur',
        ready: true,
        restartCount: 1,
        image: 'b',
        imageID: 'b',
        state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
        lastState: { terminated: { exitCode: 1, containerID: 'containerd://old', startedAt: null, finishedAt: null } },
      },
    ],
  };

  const handlers = (): ServerHandlers => ({
    registry,
    checks: [{ name: 'ping', check: () => ({ ok: true, message: 'ok' }) }],
    pods: () => ({ kind: 'PodList', items: [pod] }),
    runningPods: () => ({ kind: 'PodList', items: [] }),
    probeMetrics: async () => 'prober_probe_total 0\n',
    resourceMetrics: async () => 'resource_scrape_error 0\n',
    statsSummary: async () => '{"node":{},"pods":[]}',
    configz: () => ({ port: 10250 }),
    nodeLogDir: logDir,
    containerLogs: {
      clock: realClock,
      podByName: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
      statusOf: () => status,
      logPath: async (id) => (id === 'cur' ? logFile() : join(dir, 'pods', 'old.log')),
      isRunning: async () => running,
    },
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-server-'));
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    pki = makePki(join(dir, 'a'), 'kube-apiserver-kubelet-client');
    foreign = makePki(join(dir, 'b'), 'mallory');
    logDir = join(dir, 'varlog');
    mkdirSync(join(logDir, 'sub'), { recursive: true });
    writeFileSync(join(logDir, 'syslog'), 'line one\n');
    writeFileSync(join(dir, 'secret'), 'do not serve\n');
    symlinkSync(join(dir, 'secret'), join(logDir, 'escape'));
    mkdirSync(join(dir, 'pods'));
    writeFileSync(
      logFile(),
      '2026-01-01T00:00:01.5Z stdout F first\n2026-01-01T00:00:02Z stderr P par\n2026-01-01T00:00:02.1Z stderr F tial\n2026-01-01T00:00:03Z stdout F third\n',
    );
    writeFileSync(join(dir, 'pods', 'old.log'), '2025-12-31T23:00:00Z stdout F from the previous instance\n');

    const tokens: Record<string, TokenReviewResult> = {
      good: { authenticated: true, user: { name: 'alice', groups: ['devs'] } },
      denied: { authenticated: true, user: { name: 'eve', groups: [] } },
    };
    const cert = await loadServingCert({
      tlsCertFile: '',
      tlsPrivateKeyFile: '',
      certDir: join(dir, 'pki'),
      hostname: 'node-a',
      nowMs: Date.now(),
    });
    main = await startKubeletServer({
      host: '127.0.0.1',
      port: 0,
      handlers: handlers(),
      metrics: httpMetrics(registry),
      logger: pino({ level: 'silent' }),
      tls: { cert: cert.cert, key: cert.key, clientCA: readFileSync(pki.caCert, 'utf8') },
      auth: {
        nodeName: 'node-a',
        authenticator: new RequestAuthenticator({
          clock: realClock,
          anonymous: false,
          tokens: {
            cacheTTLMs: 60_000,
            reviewer: {
              review: async (t) => {
                reviews.push(t);
                return tokens[t] ?? { authenticated: false, error: 'token not known' };
              },
            },
          },
        }),
        authorizer: new WebhookAuthorizer({
          clock: realClock,
          authorizedTTLMs: 60_000,
          unauthorizedTTLMs: 60_000,
          reviewer: {
            review: async (user, attrs) => {
              accessReviews.push({ user, attrs });
              return { allowed: user.name !== 'eve', reason: '' };
            },
          },
        }),
      },
    });
    readOnly = await startKubeletServer({
      host: '127.0.0.1',
      port: 0,
      handlers: handlers(),
      metrics: httpMetrics(new Registry()),
      logger: pino({ level: 'silent' }),
    });
  });

  afterAll(() => {
    main?.closeAllConnections();
    main?.close();
    readOnly?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const port = (s: Server) => (s.address() as AddressInfo).port;

  function get(path: string, o: { cert?: Pki; token?: string } = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: port(main),
          path,
          rejectUnauthorized: false,
          ...(o.cert && { cert: readFileSync(o.cert.clientCert), key: readFileSync(o.cert.clientKey) }),
          headers: o.token ? { authorization: `Bearer ${o.token}` } : {},
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('serves HTTPS with the self-signed certificate it generated (CN node-a@…)', async () => {
    const subject = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: port(main), path: '/healthz', rejectUnauthorized: false }, (res) => {
        resolve(String((res.socket as TLSSocket).getPeerCertificate().subject.CN));
        res.resume();
      });
      req.on('error', reject);
      req.end();
    });
    expect(subject).toMatch(/^node-a@\d+$/);
  });

  it('an unauthenticated request gets 401 Unauthorized', async () => {
    expect(await get('/pods')).toMatchObject({ status: 401, body: 'Unauthorized' });
  });

  it('a client certificate from the CA authenticates CN/O, and authorization sees the node attributes', async () => {
    const r = await get('/pods', { cert: pki });
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body) as { items: Pod[] }).items[0].metadata.name).toBe('web');
    expect(accessReviews.at(-1)).toEqual({
      user: { name: 'kube-apiserver-kubelet-client', groups: ['system:masters'] },
      attrs: {
        verb: 'get',
        namespace: '',
        group: '',
        version: 'v1',
        resource: 'nodes',
        subresource: 'proxy',
        name: 'node-a',
        path: '/pods',
      },
    });
    await get('/stats/summary', { cert: pki });
    expect(accessReviews.at(-1)?.attrs.subresource).toBe('stats');
  });

  it('a client certificate the CA did not sign fails the TLS connection: no HTTP answer', async () => {
    await expect(get('/pods', { cert: foreign })).rejects.toThrow(/socket hang up|ECONNRESET|EPIPE/);
  });

  it('bearer tokens: reviewed (and cached), unknown ones are 401, a denied review is 403', async () => {
    expect((await get('/pods', { token: 'good' })).status).toBe(200);
    expect((await get('/metrics/probes', { token: 'good' })).body).toBe('prober_probe_total 0\n');
    expect(reviews.filter((t) => t === 'good')).toHaveLength(1);
    expect(await get('/pods', { token: 'bogus' })).toMatchObject({ status: 401, body: 'Unauthorized' });
    expect(await get('/configz', { token: 'denied' })).toMatchObject({
      status: 403,
      body: 'Forbidden (user=eve, verb=get, resource=nodes, subresource=proxy)',
    });
    expect(await get('/metrics', { token: 'denied' })).toMatchObject({
      status: 403,
      body: 'Forbidden (user=eve, verb=get, resource=nodes, subresource=metrics)',
    });
  });

  it('/logs/ serves the node log directory and nothing outside it', async () => {
    const ok = { token: 'good' };
    const list = await get('/logs/', ok);
    expect(list.status).toBe(200);
    expect(list.body).toBe('<pre>\n<a href="escape">escape</a>\n<a href="sub/">sub/</a>\n<a href="syslog">syslog</a>\n</pre>\n');
    expect(await get('/logs/syslog', ok)).toMatchObject({ status: 200, body: 'line one\n' });
    expect(await get('/logs/sub', ok)).toMatchObject({ status: 301, headers: { location: 'sub/' } });
    // Traversal: cleaned before routing (a redirect to the clean path, which is not under /logs/), never served.
    for (const p of ['/logs/..%2fsecret', '/logs/sub/..%2f..%2fsecret', '/logs/%2e%2e/secret']) {
      const r = await get(p, ok);
      expect(r.body).not.toContain('do not serve');
      expect([301, 404]).toContain(r.status);
    }
    const redirected = await get('/logs/..%2f..%2fetc%2fpasswd', ok);
    expect(redirected).toMatchObject({ status: 301, headers: { location: '/etc/passwd' } });
    expect((await get('/etc/passwd', ok)).status).toBe(404);
    // A symbolic link out of the directory is not followed.
    expect((await get('/logs/escape', ok)).status).toBe(404);
  });

  it('/containerLogs: tail, timestamps, limitBytes, sinceTime, previous, and errors', async () => {
    const ok = { token: 'good' };
    const logs = (q: string) => get(`/containerLogs/default/web/app${q}`, ok);
    expect(await logs('')).toMatchObject({ status: 200, body: 'first\npartial\nthird\n' });
    expect((await logs('?tailLines=1')).body).toBe('third\n');
    expect((await logs('?tail=2')).body).toBe('tial\nthird\n');
    expect((await logs('?timestamps=true&tailLines=3')).body).toBe('2026-01-01T00:00:02Z partial\n2026-01-01T00:00:03Z third\n');
    expect((await logs('?limitBytes=8')).body).toBe('first\npa');
    expect((await logs('?sinceTime=2026-01-01T00:00:02Z')).body).toBe('partial\nthird\n');
    expect((await logs('?previous=true')).body).toBe('from the previous instance\n');
    expect(await logs('?tailLines=-1')).toMatchObject({ status: 422, body: '{"message": "Invalid request."}' });
    expect(await logs('?follow=maybe')).toMatchObject({ status: 400, body: '{"message": "Unable to decode query."}' });
    expect(await get('/containerLogs/default/nope/app', ok)).toMatchObject({ status: 404, body: 'pod "nope" does not exist' });
    expect(await get('/containerLogs/default/web/other', ok)).toMatchObject({
      status: 404,
      body: 'container "other" not found in pod "web"',
    });
  });

  it('/containerLogs?follow streams new lines until the container stops', async () => {
    running = true;
    const chunks: string[] = [];
    const done = new Promise<number>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: port(main),
          path: '/containerLogs/default/web/app?follow=true&tailLines=0',
          rejectUnauthorized: false,
          headers: { authorization: 'Bearer good' },
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (c: string) => chunks.push(c));
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
    await new Promise((r) => setTimeout(r, 300)); // the stream is open and at the end of the file
    appendFileSync(logFile(), '2026-01-01T00:00:04Z stdout F fourth\n');
    await pollUntil('the new line streamed', () => chunks.join('').includes('fourth'));
    running = false;
    appendFileSync(logFile(), '2026-01-01T00:00:05Z stdout F last words\n');
    expect(await done).toBe(200);
    expect(chunks.join('')).toBe('fourth\nlast words\n');
  });

  it('counts requests in kubelet_http_requests_total and kubelet_http_inflight_requests', async () => {
    const text = await registry.metrics();
    expect(text).toMatch(
      /kubelet_http_requests_total\{method="GET",path="containerLogs",server_type="readwrite",long_running="false"\} \d+/,
    );
    expect(text).toMatch(
      /kubelet_http_requests_total\{method="GET",path="metrics\/probes",server_type="readwrite",long_running="false"\} 1/,
    );
    expect(text).toContain('kubelet_http_inflight_requests{method="GET",path="pods",server_type="readwrite",long_running="false"} 0');
  });

  it('the read-only server: plain HTTP, no authentication, default routes only', async () => {
    const plain = (path: string, method = 'GET') =>
      new Promise<Reply>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: port(readOnly), path, method }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        });
        req.on('error', reject);
        req.end();
      });
    // /pods is written in chunks with the length of all of them
    const pods = await plain('/pods');
    expect(pods.status).toBe(200);
    expect(Number(pods.headers['content-length'])).toBe(Buffer.byteLength(pods.body));
    expect(JSON.parse(pods.body)).toEqual(JSON.parse(JSON.stringify({ kind: 'PodList', items: [pod] })));
    const head = await plain('/pods', 'HEAD');
    expect(head).toMatchObject({ status: 200, body: '' });
    expect(head.headers['content-length']).toBe(pods.headers['content-length']);
    expect((await plain('/healthz')).body).toBe('ok');
    expect((await plain('/stats/summary')).body).toBe('{"node":{},"pods":[]}');
    expect((await plain('/containerLogs/default/web/app')).status).toBe(404);
    expect((await plain('/configz')).status).toBe(404);
    expect((await plain('/logs/')).status).toBe(404);
  });
});
