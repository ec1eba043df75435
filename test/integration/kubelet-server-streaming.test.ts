/**
 * The kubelet server's streaming endpoints on real sockets, with a fake
 * runtime streaming server behind them: the upgrade is authenticated and
 * authorized, proxied to the runtime's one-time URL with its headers, bytes
 * flow both ways with half-close, upstream's errors come back, and nothing
 * stays open after a thousand sessions.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { realClock } from '../../src/common/clock.js';
import { CriError } from '../../src/common/errors.js';
import { RequestAuthenticator, type TokenReviewResult } from '../../src/main/server/authenticator.js';
import { WebhookAuthorizer } from '../../src/main/server/authorizer.js';
import { httpMetrics } from '../../src/main/server/http-metrics.js';
import { startKubeletServer, type ServerHandlers } from '../../src/main/server/kubelet-server.js';
import { loadServingCert } from '../../src/main/server/serving-cert.js';
import type { StreamingHost, StreamOptions } from '../../src/main/server/streaming.js';
import { pollUntil } from '../helpers/poll.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } };

/** One raw HTTP/1.1 exchange over TLS: the answer's head, then whatever `after` does with the socket. */
function upgradeRequest(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ socket: TLSSocket; head: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const lines = [`POST ${path} HTTP/1.1`, 'Host: kubelet', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      resolve({ socket, head: buf.subarray(0, end).toString(), rest: buf.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

const UPGRADE = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' };

describe('kubelet server streaming (exec, attach, port-forward, run) through to a fake runtime', () => {
  let dir: string;
  let kubelet: Server;
  let runtime: Server;
  const backendRequests: IncomingMessage[] = [];
  const backendSockets = new Set<Socket>();
  const calls: { op: string; id: string; cmd?: string[]; o?: StreamOptions; ports?: number[] }[] = [];
  const port = (s: Server) => (s.address() as AddressInfo).port;
  /** What the fake pod status cache says runs as container "app" (none by default), and the runtime's live lists. */
  let cachedId: string | undefined;
  let liveLists = 0;
  /** Containers the fake runtime refuses to exec in or attach to (no longer running). */
  const stopped = new Set(['cid-old']);
  const refuse = (id: string) => {
    if (stopped.has(id)) throw new CriError(`Exec: rpc error: code = NotFound desc = container ${id} is not running`, 'Exec', 5);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-stream-'));
    // The runtime's streaming server: answers 101 and echoes upper-cased bytes; at the client's end it says bye.
    runtime = createServer();
    runtime.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      backendRequests.push(req);
      backendSockets.add(socket);
      socket.once('close', () => backendSockets.delete(socket));
      if (!req.url?.startsWith('/token/')) return socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
      );
      socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
      socket.on('end', () => socket.end('bye'));
    });
    await new Promise<void>((r) => runtime.listen(0, '127.0.0.1', r));
    const url = (op: string) => `http://127.0.0.1:${port(runtime)}/token/${op}`;
    const streaming: StreamingHost = {
      podByName: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
      runningContainerId: async (_p, name) => (liveLists++, name === 'app' ? 'cid-app' : undefined),
      // "nope" stands for a container that runs but is not in the pod's spec.
      cachedRunningContainerId: (_p, name) => (name === 'app' || name === 'nope' ? cachedId : undefined),
      readySandboxId: async () => 'sb-1',
      exec: async (id, cmd, o) => (refuse(id), calls.push({ op: 'exec', id, cmd, o }), url('exec')),
      attach: async (id, o) => (refuse(id), calls.push({ op: 'attach', id, o }), url('attach')),
      portForward: async (id, ports) => (calls.push({ op: 'portForward', id, ports }), url('pf')),
      runInContainer: async (id, cmd) => (calls.push({ op: 'run', id, cmd }), Buffer.from(`ran ${cmd.join('+')}`)),
      idleTimeoutMs: 0,
      logger: pino({ level: 'silent' }),
    };
    const tokens: Record<string, TokenReviewResult> = {
      good: { authenticated: true, user: { name: 'alice', groups: [] } },
      noproxy: { authenticated: true, user: { name: 'eve', groups: [] } },
    };
    const cert = await loadServingCert({
      tlsCertFile: '',
      tlsPrivateKeyFile: '',
      certDir: join(dir, 'pki'),
      hostname: 'n',
      nowMs: Date.now(),
    });
    const handlers = { containerLogs: {}, streaming } as unknown as ServerHandlers;
    kubelet = await startKubeletServer({
      host: '127.0.0.1',
      port: 0,
      handlers,
      metrics: httpMetrics(new Registry()),
      logger: pino({ level: 'silent' }),
      tls: { cert: cert.cert, key: cert.key },
      auth: {
        nodeName: 'n',
        authenticator: new RequestAuthenticator({
          clock: realClock,
          anonymous: false,
          tokens: { cacheTTLMs: 60_000, reviewer: { review: async (t) => tokens[t] ?? { authenticated: false, error: 'no' } } },
        }),
        authorizer: new WebhookAuthorizer({
          clock: realClock,
          authorizedTTLMs: 60_000,
          unauthorizedTTLMs: 60_000,
          reviewer: { review: async (user, attrs) => ({ allowed: user.name === 'alice' && attrs.subresource === 'proxy', reason: '' }) },
        }),
      },
    });
  });

  afterAll(() => {
    kubelet?.closeAllConnections();
    kubelet?.close();
    runtime?.closeAllConnections();
    runtime?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const auth = { Authorization: 'Bearer good' };

  it('exec: proxies the upgrade with its headers, both directions, and the half-close', async () => {
    const r = await upgradeRequest(
      port(kubelet),
      '/exec/default/web/app?command=sh&command=-c&command=echo%20hi&input=1&output=1&error=1',
      {
        ...UPGRADE,
        ...auth,
      },
    );
    expect(r.head).toMatch(/^HTTP\/1.1 101 Switching Protocols/);
    expect(calls.at(-1)).toEqual({
      op: 'exec',
      id: 'cid-app',
      cmd: ['sh', '-c', 'echo hi'],
      o: { stdin: true, stdout: true, stderr: true, tty: false },
    });
    const back = backendRequests.at(-1)!;
    expect(back.url).toBe('/token/exec?command=sh&command=-c&command=echo%20hi&input=1&output=1&error=1');
    expect(back.headers).toMatchObject({
      upgrade: 'SPDY/3.1',
      'x-stream-protocol-version': 'v4.channel.k8s.io',
      'x-forwarded-for': '127.0.0.1',
    });
    let got = r.rest.toString();
    r.socket.on('data', (d: Buffer) => (got += d.toString()));
    r.socket.write('ping');
    await pollUntil('the echo', () => got.includes('PING'));
    const ended = new Promise((res) => r.socket.once('end', res));
    r.socket.end(); // half-close: the runtime still answers
    await ended;
    expect(got).toBe('PINGbye');
  });

  it('exec and attach ask for the container the cache saw running, and take the live list when the runtime refuses it', async () => {
    const session = async (path: string) => {
      const r = await upgradeRequest(port(kubelet), path, { ...UPGRADE, ...auth });
      r.socket.destroy();
      return r.head;
    };
    try {
      cachedId = 'cid-app';
      let lists = liveLists;
      expect(await session('/exec/default/web/app?command=true&output=1')).toMatch(/^HTTP\/1.1 101/);
      expect(await session('/attach/default/web/app?output=1')).toMatch(/^HTTP\/1.1 101/);
      expect(liveLists).toBe(lists); // no runtime list
      expect(calls.slice(-2).map((c) => [c.op, c.id])).toEqual([
        ['exec', 'cid-app'],
        ['attach', 'cid-app'],
      ]);
      // The cache is a relist behind: its container has stopped (or restarted as cid-app). The runtime refuses the
      // cached id, and the request goes on as upstream's: a live list, then Exec with what it found.
      cachedId = 'cid-old';
      lists = liveLists;
      expect(await session('/exec/default/web/app?command=true&output=1')).toMatch(/^HTTP\/1.1 101/);
      expect(liveLists).toBe(lists + 1);
      expect(calls.at(-1)).toMatchObject({ op: 'exec', id: 'cid-app' });
      // Attach needs the container in the pod's spec (for its TTY): one the cache saw running but the spec lacks is refused.
      cachedId = 'cid-app';
      const r = await upgradeRequest(port(kubelet), '/attach/default/web/nope?output=1', { ...UPGRADE, ...auth });
      expect(r.head).toMatch(/^HTTP\/1.1 500/);
      r.socket.destroy();
    } finally {
      cachedId = undefined;
    }
  });

  it('attach takes the TTY from the container spec; port-forward asks for the pod sandbox', async () => {
    const a = await upgradeRequest(port(kubelet), '/attach/default/web/app?output=1&tty=1', { ...UPGRADE, ...auth });
    expect(a.head).toMatch(/^HTTP\/1.1 101/);
    a.socket.destroy();
    expect(calls.at(-1)).toEqual({ op: 'attach', id: 'cid-app', o: { stdin: false, stdout: true, stderr: false, tty: false } });
    const p = await upgradeRequest(port(kubelet), '/portForward/default/web', { ...UPGRADE, ...auth });
    expect(p.head).toMatch(/^HTTP\/1.1 101/);
    p.socket.destroy();
    expect(calls.at(-1)).toEqual({ op: 'portForward', id: 'sb-1', ports: [] });
  });

  it.each([
    ['unauthenticated', '/exec/default/web/app?output=1', {}, /^HTTP\/1.1 401/, 'Unauthorized'],
    [
      'without nodes/proxy',
      '/exec/default/web/app?output=1',
      { Authorization: 'Bearer noproxy' },
      /^HTTP\/1.1 403/,
      'Forbidden (user=eve, verb=create, resource=nodes, subresource=proxy)',
    ],
    ['an unknown pod', '/exec/default/nope/app?output=1', auth, /^HTTP\/1.1 404/, 'pod does not exist'],
    ['an unknown container', '/exec/default/web/nope?output=1', auth, /^HTTP\/1.1 500/, 'container not found ("nope")'],
    ['no stream', '/exec/default/web/app?command=ls', auth, /^HTTP\/1.1 400/, 'you must specify at least 1 of stdin, stdout, stderr'],
    [
      'attach to an unknown container',
      '/attach/default/web/nope?output=1',
      auth,
      /^HTTP\/1.1 500/,
      'container nope not found in pod web_default',
    ],
  ])('%s: upstream status and text', async (_what, path, headers, status, text) => {
    const r = await upgradeRequest(port(kubelet), path, { ...UPGRADE, ...headers });
    expect(r.head).toMatch(status);
    let body = r.rest.toString();
    await new Promise<void>((res) => {
      r.socket.on('data', (d: Buffer) => (body += d.toString()));
      r.socket.once('close', () => res());
    });
    expect(body).toContain(text);
  });

  it('a request without an upgrade gets upstream\'s 500 "Upgrade request required"; /run returns the output', async () => {
    const plain = await upgradeRequest(port(kubelet), '/exec/default/web/app?output=1', { ...auth, 'Content-Length': '0' });
    expect(plain.head).toMatch(/^HTTP\/1.1 500/);
    plain.socket.destroy();
    const run = await upgradeRequest(port(kubelet), '/run/default/web/app?cmd=echo%20a%20b', { ...auth, 'Content-Length': '0' });
    expect(run.head).toMatch(/^HTTP\/1.1 200/);
    let body = run.rest.toString();
    run.socket.on('data', (d: Buffer) => (body += d.toString()));
    await pollUntil('the output', () => body.includes('ran echo+a+b'));
    run.socket.destroy();
  });

  it('1000 sessions leave no connection open on either side', async () => {
    for (let i = 0; i < 1000; i++) {
      const r = await upgradeRequest(port(kubelet), '/exec/default/web/app?output=1', { ...UPGRADE, ...auth });
      if (i % 2 === 0) r.socket.destroy();
      else r.socket.end();
      await new Promise((res) => r.socket.once('close', res));
    }
    const open = () => new Promise<number>((res) => kubelet.getConnections((_e, n) => res(n)));
    await pollUntil('every connection closed', async () => (await open()) === 0 && backendSockets.size === 0, { timeoutMs: 20_000 });
  }, 120_000);

  it('an upgrade refused to a keep-alive client closes with "Connection: close", so the client does not reuse it', async () => {
    const agent = new HttpsAgent({ keepAlive: true });
    const once = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: port(kubelet),
            method: 'POST',
            path: '/exec/default/web/app?output=1',
            rejectUnauthorized: false,
            headers: UPGRADE,
            agent,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('upgrade', () => reject(new Error('upgraded')));
        req.on('error', reject);
        req.end();
      });
    try {
      expect([await once(), await once(), await once()]).toEqual([401, 401, 401]);
    } finally {
      agent.destroy();
    }
  });

  it('closeAllConnections ends open streaming sessions, so close() returns', async () => {
    const r = await upgradeRequest(port(kubelet), '/exec/default/web/app?output=1', { ...UPGRADE, ...auth });
    expect(r.head).toMatch(/^HTTP\/1.1 101/);
    const sessionClosed = new Promise((res) => r.socket.once('close', res));
    await new Promise<void>((res) => {
      kubelet.closeAllConnections();
      kubelet.close(() => res());
    });
    await sessionClosed;
    await pollUntil('the runtime side closed', () => backendSockets.size === 0);
  });
});
