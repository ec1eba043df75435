/**
 * Hostile clients on the kubelet port (issue 33): half-open connections (TCP
 * without a TLS handshake), headers sent slowly, an oversized request body.
 * Each is bounded in count or time (ServerLimits, small here so the test is
 * quick; the defaults are in SERVER_LIMITS) and the server keeps answering
 * others meanwhile.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/common/clock.js';
import { RequestAuthenticator } from '../../src/main/server/authenticator.js';
import { httpMetrics } from '../../src/main/server/http-metrics.js';
import { startKubeletServer, type ServerHandlers } from '../../src/main/server/kubelet-server.js';
import { loadServingCert } from '../../src/main/server/serving-cert.js';
import { pollUntil } from '../helpers/poll.js';

const LIMITS = { maxConnections: 50, handshakeTimeoutMs: 1000, headersTimeoutMs: 1000, requestTimeoutMs: 2000, checkIntervalMs: 250 };

const handlers = (): ServerHandlers =>
  ({
    registry: new Registry(),
    checks: [{ name: 'ping', check: () => ({ ok: true, message: 'ok' }) }],
    pods: () => ({ kind: 'PodList', items: [] }),
    runningPods: () => ({ kind: 'PodList', items: [] }),
    probeMetrics: async () => '',
    resourceMetrics: async () => '',
    statsSummary: async () => '{}',
    configz: () => ({}),
  }) as unknown as ServerHandlers;

describe('kubelet server limits against hostile clients', () => {
  let dir: string;
  let tlsServer: Server;
  let plain: Server;
  const lines: { msg: string; err?: string }[] = [];
  const port = (s: Server) => (s.address() as AddressInfo).port;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-limits-'));
    const cert = await loadServingCert({ tlsCertFile: '', tlsPrivateKeyFile: '', certDir: dir, hostname: 'n', nowMs: Date.now() });
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string }) });
    tlsServer = await startKubeletServer({
      host: '127.0.0.1',
      port: 0,
      handlers: handlers(),
      metrics: httpMetrics(new Registry()),
      logger,
      tls: { cert: cert.cert, key: cert.key },
      auth: {
        nodeName: 'n',
        authenticator: new RequestAuthenticator({ clock: realClock, anonymous: true }),
        authorizer: { authorize: async () => ({ allowed: true, reason: '' }) },
      },
      limits: LIMITS,
    });
    plain = await startKubeletServer({
      host: '127.0.0.1',
      port: 0,
      handlers: handlers(),
      metrics: httpMetrics(new Registry()),
      logger,
      limits: LIMITS,
    });
  });

  afterAll(() => {
    tlsServer?.closeAllConnections();
    tlsServer?.close();
    plain?.closeAllConnections();
    plain?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const r = httpRequest({ host: '127.0.0.1', port: port(plain), path }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      r.on('error', reject).end();
    });

  it('1,000 half-open connections: at most maxConnections held, the rest closed at once and logged once; all gone after the handshake timeout', async () => {
    const sockets: Socket[] = [];
    const closed = new Set<Socket>();
    for (let i = 0; i < 1000; i++) {
      const s = connect(port(tlsServer), '127.0.0.1');
      s.on('error', () => undefined).on('close', () => closed.add(s));
      sockets.push(s);
    }
    try {
      await pollUntil('the connections over the limit closed', () => closed.size >= 1000 - LIMITS.maxConnections, { timeoutMs: 20_000 });
      const held = await new Promise<number>((r) => tlsServer.getConnections((_, n) => r(n)));
      expect(held).toBeLessThanOrEqual(LIMITS.maxConnections);
      const drops = lines.filter((l) => l.msg.includes('Accepting a connection on the kubelet server failed'));
      expect(drops).toHaveLength(1);
      expect(drops[0].err).toBe('over the limit of 50 open connections; closed at once');
      // The held ones end with the handshake timeout.
      await pollUntil('every half-open connection closed', () => closed.size === 1000, { timeoutMs: 20_000 });
      expect(await new Promise<number>((r) => tlsServer.getConnections((_, n) => r(n)))).toBe(0);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('headers sent a byte at a time are cut off at the headers timeout; other requests are answered meanwhile', async () => {
    const s = connect(port(plain), '127.0.0.1');
    const t0 = Date.now();
    let closedAt = 0;
    let reply = '';
    s.on('data', (d) => (reply += d.toString())).on('close', () => (closedAt = Date.now()));
    s.on('error', () => undefined);
    s.write('GET /pods HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => s.writable && s.write('X'), 100);
    try {
      expect(await get('/healthz')).toBe(200);
      await pollUntil('the slow client cut off', () => closedAt > 0, { timeoutMs: 10_000 });
    } finally {
      clearInterval(trickle);
      s.destroy();
    }
    expect(closedAt - t0).toBeLessThan(LIMITS.headersTimeoutMs + 2 * LIMITS.checkIntervalMs + 1000);
    expect(reply).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
  });

  // Node's server does this itself (it does not drain an unread body past the response); kept as a guard.
  it('a 1 GiB body to an endpoint that takes none: answered, and the connection closed instead of drained', async () => {
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent >= 1 << 30) return void this.push(null);
        sent += 1 << 16;
        this.push(Buffer.alloc(1 << 16));
      },
    });
    const t0 = Date.now();
    const status = await new Promise<number>((resolve) => {
      const r = httpRequest(
        { host: '127.0.0.1', port: port(plain), path: '/pods', method: 'POST', headers: { 'content-length': String(1 << 30) } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      r.on('error', () => resolve(-1));
      body.pipe(r);
    });
    await pollUntil(
      'the upload to stop',
      async () => {
        const before = sent;
        await new Promise((r) => setTimeout(r, 200));
        return sent === before;
      },
      { timeoutMs: 10_000 },
    );
    expect(status, 'the reply to the POST (-1: the connection closed first)').toBeOneOf([405, -1]);
    expect(sent).toBeLessThan(256 << 20);
    expect(Date.now() - t0).toBeLessThan(LIMITS.requestTimeoutMs + 5000);
    expect(await get('/healthz')).toBe(200);
  });
});
