/**
 * The SPDY/3 connection (src/main/server/spdy/connection.ts) over a loopback
 * TCP pair, client role against server role, plus raw frames where the
 * peer's behaviour is the point: streams and their headers, data both ways,
 * FIN, RST, PING echo, GOAWAY, and the end of the socket ending every stream.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SpdyConnection, type SpdyStream } from '../../src/main/server/spdy/connection.js';
import { encodeGoAway, encodePing, encodeRstStream, FrameReader, type Frame } from '../../src/main/server/spdy/frames.js';
import { pollUntil } from '../helpers/poll.js';

let server: Server | undefined;
const sockets: Socket[] = [];

afterEach(() => {
  for (const s of sockets) s.destroy();
  sockets.length = 0;
  server?.close();
});

/** A connected loopback pair: [client end, server end]. */
async function pair(): Promise<[Socket, Socket]> {
  const accepted = new Promise<Socket>((resolve) => {
    server = createServer((s) => resolve(s));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const port = (server!.address() as { port: number }).port;
  const client = connect(port, '127.0.0.1');
  const peer = await accepted;
  sockets.push(client, peer);
  return [client, peer];
}

describe('SPDY/3 connection', () => {
  it('opens streams with headers, carries data both ways, passes FIN and RST on', async () => {
    const [a, b] = await pair();
    const client = new SpdyConnection(a, 'client');
    const srv = new SpdyConnection(b, 'server');
    const got: SpdyStream[] = [];
    srv.on('stream', (s: SpdyStream) => got.push(s));
    const out = client.openStream([['streamType', 'stdout']]);
    const inn = client.openStream([['streamType', 'stdin']]);
    expect([out.id, inn.id]).toEqual([1, 3]);
    await pollUntil('both streams at the server', () => got.length === 2);
    expect(got.map((s) => s.headers.get('streamtype'))).toEqual(['stdout', 'stdin']);
    await pollUntil('the replies', () => out.replied && inn.replied);

    const clientGot: string[] = [];
    out.onData = (d) => clientGot.push(d.toString());
    let outEnd: boolean | undefined;
    out.onRemoteClose = (reset) => (outEnd = reset);
    got[0].write(Buffer.from('x'.repeat(70_000)));
    got[0].end();
    await pollUntil('the FIN', () => outEnd === false);
    expect(clientGot.join('')).toBe('x'.repeat(70_000));

    const serverGot: string[] = [];
    got[1].onData = (d) => serverGot.push(d.toString());
    let inEnd: boolean | undefined;
    got[1].onRemoteClose = (reset) => (inEnd = reset);
    inn.write(Buffer.from('hi'));
    inn.reset();
    await pollUntil('the RST', () => inEnd === true);
    expect(serverGot).toEqual(['hi']);
  });

  it("echoes the peer's PING, reports GOAWAY, and ends every open stream when the socket closes", async () => {
    const [a, b] = await pair();
    const client = new SpdyConnection(a, 'client');
    const frames: Frame[] = [];
    const reader = new FrameReader();
    b.on('data', (d: Buffer) => frames.push(...reader.push(d)));
    const s = client.openStream([['streamType', 'error']]);
    let ended: boolean | undefined;
    s.onRemoteClose = (reset) => (ended = reset);
    let goaway: number | undefined;
    client.on('goaway', (last: number) => (goaway = last));
    let closed = false;
    client.on('close', () => (closed = true));

    b.write(encodePing(2)); // a server's ping: even id
    await pollUntil('the echo', () => frames.some((f) => f.kind === 'ping' && f.id === 2));
    b.write(encodeRstStream(99, 5)); // an unknown stream: ignored
    b.write(encodeGoAway(1));
    await pollUntil('the GOAWAY', () => goaway === 1);
    expect(ended).toBeUndefined();
    b.end();
    await pollUntil('the close', () => closed);
    expect(ended).toBe(true);
    expect(frames.filter((f) => f.kind === 'synStream')).toHaveLength(1);
  });

  it('a protocol error (a frame of another SPDY version) closes the socket and is reported', async () => {
    const [a, b] = await pair();
    const client = new SpdyConnection(a, 'client');
    const errors: string[] = [];
    client.on('error', (err: Error) => errors.push(err.message));
    const bad = encodePing(1);
    bad.writeUInt16BE(0x8002, 0);
    b.write(bad);
    await pollUntil('the socket closed', () => a.destroyed);
    expect(errors).toEqual(['SPDY version 2 frame on a SPDY/3 connection']);
  });
});
