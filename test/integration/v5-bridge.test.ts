/**
 * The kubelet server's WebSocket v5 bridge (v5-bridge.ts) on real sockets:
 * a `ws` client speaking v5.channel.k8s.io as kubectl ≥ 1.30 does, the
 * kubelet server, and a fake runtime streaming server speaking SPDY/3.1
 * remotecommand v4 (test/helpers/fake-spdy-runtime.ts). Checks stdin to
 * stdout, stdin's half-close, stderr, the exit code on the error channel,
 * resize, the runtime's refusal, what is still proxied, and that nothing
 * stays open on either side.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Pod } from '../../src/api/pod.js';
import { realClock } from '../../src/common/clock.js';
import { RequestAuthenticator } from '../../src/main/server/authenticator.js';
import { httpMetrics } from '../../src/main/server/http-metrics.js';
import { startKubeletServer, type ServerHandlers } from '../../src/main/server/kubelet-server.js';
import type { StreamingHost, StreamOptions } from '../../src/main/server/streaming.js';
import { FakeSpdyRuntime } from '../helpers/fake-spdy-runtime.js';
import { pollUntil } from '../helpers/poll.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { containers: [{ name: 'app' }, { name: 'term', tty: true }] },
};

interface Session {
  ws: WebSocket;
  /** Messages received, as [channel, text]. */
  messages: [number, string][];
  raw: Buffer[];
  closed: Promise<{ code: number }>;
  /** Resolves when a message on `channel` containing `text` has arrived. */
  waitFor(channel: number, text: string): Promise<void>;
}

function open(port: number, path: string, protocols = ['v5.channel.k8s.io']): Promise<Session> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, protocols);
  const messages: [number, string][] = [];
  const raw: Buffer[] = [];
  const closed = new Promise<{ code: number }>((resolve) => ws.on('close', (code: number) => resolve({ code })));
  ws.on('message', (data: Buffer) => {
    raw.push(data);
    messages.push([data[0], data.subarray(1).toString()]);
  });
  const waitFor = (channel: number, text: string) =>
    pollUntil(`"${text}" on channel ${channel}`, () => messages.some(([c, t]) => c === channel && t.includes(text)), {
      timeoutMs: 10_000,
      intervalMs: 5,
    }).then(() => undefined);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, messages, raw, closed, waitFor }));
    ws.once('error', reject);
  });
}

describe('exec and attach over WebSocket v5, bridged to the runtime over SPDY', () => {
  const runtime = new FakeSpdyRuntime();
  let kubelet: Server;
  let idleKubelet: Server;
  const calls: { op: string; o: StreamOptions }[] = [];
  const port = (s: Server) => (s.address() as AddressInfo).port;
  /** The script the next exec gets (the fake runtime's URL path). */
  let script = 'echo';

  const start = async (idleTimeoutMs: number) => {
    const streaming: StreamingHost = {
      podByName: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
      runningContainerId: async (_p, name) => (name === 'app' || name === 'term' ? `cid-${name}` : undefined),
      readySandboxId: async () => 'sb-1',
      exec: async (_id, _cmd, o) => (calls.push({ op: 'exec', o }), runtime.url(script)),
      attach: async (_id, o) => (calls.push({ op: 'attach', o }), runtime.url(script)),
      portForward: async () => runtime.url('pf'),
      runInContainer: async () => Buffer.alloc(0),
      idleTimeoutMs,
      logger: pino({ level: 'silent' }),
    };
    return startKubeletServer({
      host: '127.0.0.1',
      port: 0,
      handlers: { containerLogs: {}, streaming } as unknown as ServerHandlers,
      metrics: httpMetrics(new Registry()),
      logger: pino({ level: 'silent' }),
      // Anonymous requests allowed, all authorized: this file is about the bridge, not the filters.
      auth: {
        nodeName: 'n',
        authenticator: new RequestAuthenticator({ clock: realClock, anonymous: true }),
        authorizer: { authorize: async () => ({ allowed: true, reason: '' }) },
      },
    });
  };

  beforeAll(async () => {
    await runtime.listen();
    kubelet = await start(0);
    idleKubelet = await start(300);
  });

  afterAll(() => {
    for (const s of [kubelet, idleKubelet]) {
      s?.closeAllConnections();
      s?.close();
    }
    runtime.close();
  });

  const execPath = (q: string) => `/exec/default/web/app?command=sh&${q}`;

  it('stdin reaches stdout, the half-close reaches the runtime, stderr and the exit code come back, then a normal close', async () => {
    script = 'echo';
    const s = await open(port(kubelet), execPath('input=1&output=1&error=1'));
    // The first message is upstream's empty "connected" message on the lowest output channel.
    await s.waitFor(1, '');
    expect(s.raw[0]).toEqual(Buffer.from([1]));
    s.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('hello')]));
    await s.waitFor(1, 'hello');
    s.ws.send(Buffer.from([255, 0]));
    expect(await s.closed).toEqual({ code: 1000 });
    const fake = runtime.sessions.at(-1)!;
    expect(fake.request.method).toBe('POST');
    expect(fake.request.headers.upgrade).toBe('SPDY/3.1');
    expect(fake.request.headers['x-stream-protocol-version']).toBe('v4.channel.k8s.io');
    expect(fake.streamTypes).toEqual(['error', 'stdin', 'stdout', 'stderr']);
    expect(Buffer.concat(fake.stdin).toString()).toBe('hello');
    expect(fake.stdinFin).toBe(true);
    expect(s.messages.filter(([c]) => c === 2).map(([, t]) => t)).toEqual(['bye']);
    const errors = s.messages.filter(([c]) => c === 3);
    expect(errors).toHaveLength(1);
    const status = JSON.parse(errors[0][1]) as { reason: string; details: { causes: { reason: string; message: string }[] } };
    expect(status.reason).toBe('NonZeroExitCode');
    expect(status.details.causes).toEqual([{ reason: 'ExitCode', message: '3' }]);
    expect(calls.at(-1)).toEqual({ op: 'exec', o: { stdin: true, stdout: true, stderr: true, tty: false } });
    await pollUntil('the runtime connection closed', () => runtime.sockets.size === 0);
  });

  it('a TTY session sends resizes on the resize stream and has no stderr stream', async () => {
    script = 'tty';
    runtime.expected.tty = ['error', 'stdin', 'stdout', 'resize'];
    const s = await open(port(kubelet), execPath('input=1&output=1&error=1&tty=1'));
    s.ws.send(Buffer.concat([Buffer.from([4]), Buffer.from('{"Width":97,"Height":31}')]));
    await s.waitFor(1, 'size 97x31');
    s.ws.send(Buffer.concat([Buffer.from([4]), Buffer.from('{"Width":80,"Height":24}')]));
    await s.waitFor(1, 'size 80x24');
    s.ws.send(Buffer.from([255, 0]));
    expect(await s.closed).toEqual({ code: 1000 });
    expect(runtime.sessions.at(-1)!.streamTypes).toEqual(['error', 'stdin', 'stdout', 'resize']);
    expect(JSON.parse(s.messages.find(([c]) => c === 3)![1])).toEqual({ metadata: {}, status: 'Success' });
  });

  it('attach asks for the container spec TTY; a runtime that sends no status gives Success', async () => {
    script = 'nostatus';
    runtime.expected.nostatus = ['error', 'stdout', 'resize'];
    const s = await open(port(kubelet), '/attach/default/web/term?output=1');
    expect(await s.closed).toEqual({ code: 1000 });
    expect(calls.at(-1)).toEqual({ op: 'attach', o: { stdin: false, stdout: true, stderr: false, tty: true } });
    expect(s.messages.filter(([c]) => c === 1).map(([, t]) => t)).toEqual(['', 'out']);
    expect(s.messages.filter(([c]) => c === 3).map(([, t]) => JSON.parse(t) as unknown)).toEqual([{ metadata: {}, status: 'Success' }]);
  });

  it('8 MiB of stdout arrive whole and in order', async () => {
    script = 'big';
    runtime.bigBytes = randomBytes(8 * 1024 * 1024);
    runtime.expected.big = ['error', 'stdin', 'stdout'];
    const s = await open(port(kubelet), execPath('input=1&output=1'));
    s.ws.send(Buffer.from([255, 0]));
    expect(await s.closed).toEqual({ code: 1000 });
    const out = Buffer.concat(s.raw.filter((m) => m[0] === 1).map((m) => m.subarray(1)));
    expect(out.equals(runtime.bigBytes)).toBe(true);
  });

  it("a runtime that refuses the upgrade gives an InternalError status with the runtime's answer", async () => {
    script = 'gone';
    const s = await open(port(kubelet), execPath('output=1'));
    expect(await s.closed).toEqual({ code: 1000 });
    const status = JSON.parse(s.messages.find(([c]) => c === 3)![1]) as { reason: string; code: number; message: string };
    expect(status).toMatchObject({ reason: 'InternalError', code: 500 });
    expect(status.message).toBe('Internal error occurred: unable to upgrade connection: token not found');
  });

  it('errors before the upgrade are answered as before; a WebSocket without v5 is proxied to the runtime', async () => {
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port(kubelet)}/exec/default/nope/app?command=sh&output=1`, ['v5.channel.k8s.io']);
      ws.on('unexpected-response', (_req: unknown, res: { statusCode: number }) => resolve(res.statusCode));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(404);
    script = 'echo';
    const before = runtime.sessions.length;
    const proxied = await new Promise<string>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port(kubelet)}${execPath('output=1')}`, ['v4.channel.k8s.io']);
      ws.on('error', (err: Error) => resolve(err.message));
    });
    // The fake runtime only speaks SPDY: it answers the proxied WebSocket handshake with its SPDY 101, which ws rejects.
    expect(proxied).toMatch(/Invalid Upgrade header|Server sent no subprotocol|Unexpected server response/);
    expect(runtime.sessions.length).toBe(before + 1);
    expect(runtime.sessions.at(-1)!.request.headers['sec-websocket-protocol']).toBe('v4.channel.k8s.io');
    expect(runtime.sessions.at(-1)!.request.method).toBe('GET');
  });

  it('a client that goes away takes the runtime connection with it; so does the idle timeout', async () => {
    await pollUntil('no runtime connection left', () => runtime.sockets.size === 0);
    script = 'hold';
    runtime.expected.hold = ['error', 'stdin', 'stdout'];
    const s = await open(port(kubelet), execPath('input=1&output=1'));
    await pollUntil('the runtime connection', () => runtime.sockets.size === 1);
    s.ws.terminate();
    await pollUntil('the runtime connection closed', () => runtime.sockets.size === 0);
    const idle = await open(port(idleKubelet), execPath('input=1&output=1'));
    await pollUntil('the runtime connection', () => runtime.sockets.size === 1);
    // Nobody sends a byte: after 300 ms both sides are closed by the kubelet.
    expect((await idle.closed).code).not.toBe(1000);
    await pollUntil('the runtime connection closed', () => runtime.sockets.size === 0);
  });

  it('1000 sessions leave no connection open on either side', async () => {
    script = 'echo';
    for (let i = 0; i < 1000; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const s = await open(port(kubelet), execPath('input=1&output=1&error=1'));
          s.ws.send(Buffer.from([255, 0]));
          expect((await s.closed).code).toBe(1000);
        }),
      );
    }
    await pollUntil('the runtime connections closed', () => runtime.sockets.size === 0);
    const count = await new Promise<number>((resolve, reject) => kubelet.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    expect(count).toBe(0);
  });
});
