/**
 * One SPDY/3 connection over a socket that has already been upgraded, as
 * moby/spdystream runs it for Kubernetes' streaming servers: streams opened
 * with SYN_STREAM and acknowledged with SYN_REPLY, data in DATA frames, a
 * FIN flag half-closing a stream, RST_STREAM tearing one down, PING echoed,
 * GOAWAY ending the connection. No flow control: spdystream neither sends
 * nor honours WINDOW_UPDATE or SETTINGS, so both are read and ignored here;
 * back-pressure is the socket's own (write() returns false, pause/resume).
 *
 * The client role opens odd-numbered streams (openStream); the server role
 * (used by tests' fake streaming server) answers each SYN_STREAM with an
 * empty SYN_REPLY and reports the stream with its headers ('stream').
 *
 * Frames are handled in arrival order; a frame with a header block waits for
 * the connection's inflater, and the ones after it wait their turn.
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import {
  decodeHeaderBlock,
  encodeData,
  encodeGoAway,
  encodeHeaderBlock,
  encodePing,
  encodeRstStream,
  encodeSynReply,
  encodeSynStream,
  FLAG_FIN,
  FrameReader,
  RstStatus,
  type Frame,
} from './frames.js';
import { HeaderCompressor, HeaderDecompressor } from './header-codec.js';

/** DATA frames are cut at this size (Go's spdystream reads any length; this keeps single writes modest). */
const DATA_CHUNK = 32 * 1024;

export class SpdyStream {
  /** Set when the peer's FIN or RST arrived, or the connection ended. */
  remoteClosed = false;
  /** Set when this side sent FIN or RST. */
  localClosed = false;
  /** The peer answered SYN_STREAM (client role). */
  replied = false;
  onData: (data: Buffer) => void = () => undefined;
  /** The peer will send no more: FIN, RST (`reset` true) or the connection's end. */
  onRemoteClose: (reset: boolean) => void = () => undefined;

  constructor(
    private readonly conn: SpdyConnection,
    readonly id: number,
    readonly headers: ReadonlyMap<string, string>,
  ) {}

  /** Sends `data`; false when the socket's buffer is full (wait for the connection's 'drain'). */
  write(data: Buffer): boolean {
    if (this.localClosed) return true;
    let ok = true;
    for (let off = 0; off < data.length; off += DATA_CHUNK) {
      ok = this.conn.send(encodeData(this.id, data.subarray(off, off + DATA_CHUNK)));
    }
    return ok;
  }

  /** Half-closes this side (an empty DATA frame with FIN), as client-go closes stdin. */
  end(): void {
    if (this.localClosed) return;
    this.localClosed = true;
    this.conn.send(encodeData(this.id, Buffer.alloc(0), true));
  }

  reset(): void {
    if (this.localClosed && this.remoteClosed) return;
    this.localClosed = true;
    this.conn.send(encodeRstStream(this.id, RstStatus.Cancel));
    this.remoteEnded(true);
  }

  /** @internal */
  remoteEnded(reset: boolean): void {
    if (this.remoteClosed) return;
    this.remoteClosed = true;
    this.onRemoteClose(reset);
  }
}

export type SpdyRole = 'client' | 'server';

/**
 * Events: 'stream' (server role: a new stream, already replied to), 'goaway'
 * (the peer is going away), 'drain' (the socket's buffer emptied), 'error'
 * (a protocol error; the socket is destroyed), 'close' (the socket closed;
 * every stream has had onRemoteClose).
 */
export class SpdyConnection extends EventEmitter {
  private readonly reader = new FrameReader();
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  private readonly streams = new Map<number, SpdyStream>();
  private nextId: number;
  private chain: Promise<void> = Promise.resolve();
  /** Header blocks being inflated: frames after one wait for it. */
  private pending = 0;
  private closed = false;
  goneAway = false;

  constructor(
    readonly socket: Duplex,
    readonly role: SpdyRole,
    head: Buffer = Buffer.alloc(0),
  ) {
    super();
    this.nextId = role === 'client' ? 1 : 2;
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('drain', () => this.emit('drain'));
    socket.on('error', () => socket.destroy());
    // The peer is done (spdystream's read loop ends at EOF and closes): so is this side, half-open sockets included.
    socket.once('end', () => socket.end());
    socket.once('close', () => this.onClose());
    if (head.length > 0) queueMicrotask(() => this.receive(head));
  }

  /** Opens a stream with `headers` (client role). */
  openStream(headers: Iterable<readonly [string, string]>): SpdyStream {
    const id = this.nextId;
    this.nextId += 2;
    const list = [...headers];
    const stream = new SpdyStream(this, id, new Map(list.map(([k, v]) => [k.toLowerCase(), v])));
    this.streams.set(id, stream);
    this.send(encodeSynStream(id, this.compressor.compress(encodeHeaderBlock(list))));
    return stream;
  }

  /** @internal Writes one frame; false when the socket's buffer is full. */
  send(frame: Buffer): boolean {
    if (this.closed || this.socket.destroyed || !this.socket.writable) return true;
    return this.socket.write(frame);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Sends GOAWAY and ends the socket. */
  close(): void {
    if (this.closed) return;
    this.send(encodeGoAway(0));
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    for (const f of frames) {
      if (f.kind === 'synStream' || f.kind === 'synReply' || f.kind === 'headers') {
        this.pending++;
        const decoded = this.decompressor.decompress(f.headerBlock);
        this.chain = this.chain
          .then(() => decoded)
          .then((block) => this.handle(f, decodeHeaderBlock(block)))
          .catch((err: unknown) => this.fail(err as Error))
          .finally(() => this.pending--);
      } else if (this.pending === 0) {
        this.handle(f);
      } else {
        this.chain = this.chain.then(() => this.handle(f));
      }
    }
  }

  private handle(f: Frame, headers?: Map<string, string>): void {
    if (this.closed) return;
    switch (f.kind) {
      case 'data': {
        const s = this.streams.get(f.streamId);
        if (!s || s.remoteClosed) return;
        if (f.data.length > 0) s.onData(f.data);
        if (f.flags & FLAG_FIN) this.remoteEnd(s, false);
        return;
      }
      case 'synStream': {
        if (this.role !== 'server' || this.goneAway || f.streamId % 2 === 0) {
          this.send(encodeRstStream(f.streamId, RstStatus.RefusedStream));
          return;
        }
        const s = new SpdyStream(this, f.streamId, headers ?? new Map());
        this.streams.set(f.streamId, s);
        this.send(encodeSynReply(f.streamId, this.compressor.compress(encodeHeaderBlock([]))));
        this.emit('stream', s);
        if (f.flags & FLAG_FIN) this.remoteEnd(s, false);
        return;
      }
      case 'synReply': {
        const s = this.streams.get(f.streamId);
        if (!s) return;
        s.replied = true;
        if (f.flags & FLAG_FIN) this.remoteEnd(s, false);
        return;
      }
      case 'headers': {
        const s = this.streams.get(f.streamId);
        if (s && f.flags & FLAG_FIN) this.remoteEnd(s, false);
        return;
      }
      case 'rstStream': {
        const s = this.streams.get(f.streamId);
        if (!s) return;
        s.localClosed = true;
        this.remoteEnd(s, true);
        return;
      }
      case 'ping':
        // Echo the peer's pings; ours (none are sent) would come back with our own parity.
        if ((f.id % 2 === 1) !== (this.role === 'client')) this.send(encodePing(f.id));
        return;
      case 'goAway':
        this.goneAway = true;
        this.emit('goaway', f.lastGoodStreamId, f.status);
        return;
      default:
        // SETTINGS, WINDOW_UPDATE and unknown control frames: spdystream ignores them, and so does this side.
        return;
    }
  }

  private remoteEnd(s: SpdyStream, reset: boolean): void {
    s.remoteEnded(reset);
    if (s.localClosed) this.streams.delete(s.id);
  }

  private fail(err: Error): void {
    if (this.closed) return;
    if (this.listenerCount('error') > 0) this.emit('error', err);
    this.socket.destroy();
  }

  private onClose(): void {
    this.chain = this.chain.then(() => {
      this.closed = true;
      this.decompressor.close();
      for (const s of this.streams.values()) s.remoteEnded(true);
      this.streams.clear();
      this.emit('close');
    });
  }
}
