import { status } from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import {
  constants,
  createServer,
  type Http2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { grpcTimeoutHeader, H2Channel, type GrpcCallError } from '../../src/cri/h2-channel.js';

/** A gRPC-shaped HTTP/2 server on a unix socket whose answer each test chooses. */
type Handler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer) => void;

function frame(message: Buffer, announced = message.length): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(announced, 1);
  return Buffer.concat([head, message]);
}

function respondOk(stream: ServerHttp2Stream, message: Buffer): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(frame(message));
}

describe('H2Channel (unary gRPC over HTTP/2)', () => {
  let dir: string;
  let socket: string;
  let server: Http2Server | undefined;
  let channel: H2Channel;
  let handler: Handler;
  const sessions = new Set<ServerHttp2Session>();

  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer();
      server.on('session', (session) => sessions.add(session));
      server.on('stream', (stream, headers) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', () => undefined); // a call the client cancelled
        // A stream the client already cancelled gets no answer.
        stream.on('end', () => !stream.destroyed && handler(stream, headers, Buffer.concat(chunks)));
      });
      server.listen(socket, resolve);
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      for (const session of sessions) session.destroy();
      sessions.clear();
      server = undefined;
    });
  const failure = async (p: Promise<unknown>): Promise<GrpcCallError> => {
    try {
      await p;
    } catch (err) {
      return err as GrpcCallError;
    }
    throw new Error('the call succeeded');
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kts-h2-'));
    socket = join(dir, 'cri.sock');
    channel = new H2Channel({ socketPath: socket, maxMessageBytes: 1024 });
  });
  afterEach(async () => {
    channel.close();
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('frames the request with gRPC headers and returns the response message', async () => {
    await listen();
    let seen: { headers: IncomingHttpHeaders; body: Buffer } | undefined;
    handler = (stream, headers, body) => {
      seen = { headers, body };
      respondOk(stream, Buffer.from('pong'));
    };
    const out = await channel.unary('/runtime.v1.RuntimeService/Version', Buffer.from('ping'), { timeoutMs: 5000 });
    expect(out.toString()).toBe('pong');
    expect(seen!.headers).toMatchObject({
      ':method': 'POST',
      ':path': '/runtime.v1.RuntimeService/Version',
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': '5000m',
    });
    expect(seen!.body).toEqual(frame(Buffer.from('ping')));
    // An empty message (a proto3 response with only defaults) is valid.
    handler = (stream) => respondOk(stream, Buffer.alloc(0));
    expect((await channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 })).length).toBe(0);
  });

  it('offers 16 MiB flow-control windows, so a large response is sent without waiting for a WINDOW_UPDATE', async () => {
    await listen();
    let offered: { stream?: number; connection?: number } = {};
    handler = (stream) => {
      const session = stream.session!;
      offered = { stream: session.remoteSettings.initialWindowSize, connection: session.state.remoteWindowSize };
      respondOk(stream, Buffer.from('ok'));
    };
    await channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 });
    expect(offered.stream).toBe(16 * 1024 * 1024);
    expect(offered.connection).toBeGreaterThan(15 * 1024 * 1024);
  });

  it('a deadline longer than any timer (an exec without timeout) is sent in 8 digits and does not end the call early', async () => {
    expect([grpcTimeoutHeader(120_000), grpcTimeoutHeader(99_999_999), grpcTimeoutHeader(100_000_000)]).toEqual([
      '120000m',
      '99999999m',
      '100000S',
    ]);
    expect(grpcTimeoutHeader(365 * 24 * 3600 * 1000)).toBe('31536000S');
    expect(grpcTimeoutHeader(Number.MAX_SAFE_INTEGER)).toBe('99999999H');
    await listen();
    let header: unknown;
    handler = (stream, headers) => {
      header = headers['grpc-timeout'];
      setImmediate(() => respondOk(stream, Buffer.from('done')));
    };
    const out = await channel.unary('/runtime.v1.RuntimeService/ExecSync', Buffer.alloc(0), { timeoutMs: 365 * 24 * 3600 * 1000 });
    expect([out.toString(), header]).toEqual(['done', '31536000S']);
  });

  it('reports a trailers-only status with its decoded message', async () => {
    await listen();
    handler = (stream) =>
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': String(status.NOT_FOUND),
          'grpc-message': 'no%20such%20container',
        },
        { endStream: true },
      );
    expect(await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }))).toMatchObject({
      code: status.NOT_FOUND,
      details: 'no such container',
    });
  });

  it('maps an HTTP error without a gRPC status by the gRPC spec table', async () => {
    await listen();
    handler = (stream) => stream.respond({ ':status': 503 }, { endStream: true });
    expect((await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }))).code).toBe(status.UNAVAILABLE);
    handler = (stream) => stream.respond({ ':status': 404 }, { endStream: true });
    expect((await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }))).code).toBe(status.UNIMPLEMENTED);
  });

  it('maps a stream the runtime resets by the RST_STREAM table, not as an unavailable runtime', async () => {
    await listen();
    handler = (stream) => stream.close(constants.NGHTTP2_PROTOCOL_ERROR);
    const reset = await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }));
    expect([reset.code, reset.details]).toEqual([status.INTERNAL, 'the runtime reset the stream (RST_STREAM code 1)']);
    handler = (stream) => stream.close(constants.NGHTTP2_REFUSED_STREAM);
    expect((await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }))).code).toBe(status.UNAVAILABLE);
    handler = (stream) => respondOk(stream, Buffer.from('ok'));
    expect((await channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 })).toString()).toBe('ok');
  });

  it('refuses a response larger than the limit, and a request larger than it before sending', async () => {
    await listen();
    handler = (stream) => respondOk(stream, Buffer.alloc(4096, 1));
    const big = await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }));
    expect(big.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(big.details).toMatch(/Received message larger than max \(\d+ vs\. 1024\)/);
    let called = false;
    handler = (stream) => {
      called = true;
      respondOk(stream, Buffer.alloc(0));
    };
    const sent = await failure(channel.unary('/x', Buffer.alloc(2048), { timeoutMs: 5000 }));
    expect(sent).toMatchObject({ code: status.RESOURCE_EXHAUSTED, details: 'Sent message larger than max (2048 vs. 1024)' });
    await channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 });
    expect(called).toBe(true);
  });

  it('refuses a malformed frame and a compressed message', async () => {
    await listen();
    handler = (stream) => {
      stream.respond({ ':status': 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame(Buffer.from('abc'), 10));
    };
    expect((await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }))).code).toBe(status.INTERNAL);
    handler = (stream) => {
      stream.respond({ ':status': 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      const f = frame(Buffer.from('abc'));
      f[0] = 1;
      stream.end(f);
    };
    expect((await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }))).code).toBe(status.INTERNAL);
  });

  it('ends a call at its deadline and on abort, and the session stays usable', async () => {
    await listen();
    handler = () => undefined; // never answers
    expect(await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 100 }))).toMatchObject({
      code: status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded',
    });
    const ac = new AbortController();
    const pending = channel.unary('/x', Buffer.alloc(0), { timeoutMs: 60_000, signal: ac.signal });
    ac.abort('shutting down');
    expect(await failure(pending)).toMatchObject({ code: status.CANCELLED, details: 'cancelled: shutting down' });
    handler = (stream) => respondOk(stream, Buffer.from('ok'));
    expect((await channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 })).toString()).toBe('ok');
  });

  it('is UNAVAILABLE while the runtime is not listening, and reconnects once it is', async () => {
    const down = await failure(channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }));
    expect(down.code).toBe(status.UNAVAILABLE);
    expect(down.details).toContain(socket);
    await expect(channel.waitForReady(300)).rejects.toThrow(/ENOENT|ECONNREFUSED/);
    await listen();
    await channel.waitForReady(5000);
    handler = (stream) => respondOk(stream, Buffer.from('up'));
    expect((await channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 })).toString()).toBe('up');
    // The runtime restarts: the old session dies, the next call opens a new one.
    await stop();
    await listen();
    await expect
      .poll(async () => (await channel.unary('/x', Buffer.alloc(0), { timeoutMs: 5000 }).catch(() => Buffer.alloc(0))).toString(), {
        timeout: 10_000,
      })
      .toBe('up');
  });
});
