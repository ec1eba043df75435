/**
 * Unary gRPC calls over one node:http2 session on a unix socket: the CRI
 * client's transport for every unary RPC (the GetContainerEvents server
 * stream stays on grpc-js).
 *
 * Why not grpc-js for these: a CRI unary call through grpc-js passes a
 * resolving, retrying, load-balancing and subchannel call layer, a filter
 * stack and per-call metadata objects; profiled during a 1000-pod start on
 * the simulated runtime that was ~15 % of a pool worker's busy time, and it
 * sits inside every relist's list pair. The CRI needs none of it: one local
 * socket, no name resolution, no retries (the kubelet retries at its own
 * level), no compression, no call credentials. What gRPC-over-HTTP/2 requires
 * of a unary client is kept: the request headers (content-type
 * application/grpc, te: trailers, grpc-timeout), the 5-byte length-prefixed
 * message framing, grpc-status/grpc-message from the trailers (or a
 * trailers-only response), the HTTP-status and RST_STREAM code mappings of
 * the gRPC spec, the deadline, cancellation, and the message size limit in
 * both directions (upstream's 16 MiB).
 *
 * Failures reject with a {@link GrpcCallError} ({code, details} like a
 * grpc-js ServiceError), which the CRI client maps to its error classes.
 */
import { connect as connectH2, constants as h2, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { connect as connectNet } from 'node:net';
import { errorMessage } from '../common/error-message.js';
import { GrpcStatus as Status, grpcStatusName } from '../common/rpc-error.js';

/** A failed call: its gRPC status code and message (the fields a grpc-js ServiceError has). */
export class GrpcCallError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${grpcStatusName(code) ?? code}: ${details}`);
    this.name = 'GrpcCallError';
  }
}

export interface H2ChannelOptions {
  socketPath: string;
  /** Largest message sent or received, bytes (the frame's 5-byte prefix not counted). */
  maxMessageBytes: number;
}

export interface UnaryCallOptions {
  /** Deadline from now, ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

const USER_AGENT = 'kubelet-ts-cri/h2';
/** Node's largest timer delay; a longer deadline is left to the server's grpc-timeout alone. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The HTTP/2 flow-control windows (stream and connection) the client offers: upstream's 16 MiB message limit, so one response never waits for a WINDOW_UPDATE. */
const MAX_WINDOW_BYTES = 16 * 1024 * 1024;
const TIMEOUT_UNITS: [string, number][] = [
  ['m', 1],
  ['S', 1000],
  ['M', 60_000],
  ['H', 3_600_000],
];

/**
 * The grpc-timeout header value: at most 8 digits (the gRPC spec; grpc-go
 * resets a stream whose header is longer), in the finest unit that fits.
 */
export function grpcTimeoutHeader(ms: number): string {
  for (const [unit, size] of TIMEOUT_UNITS) {
    const n = Math.max(1, Math.ceil(ms / size));
    if (n < 1e8) return `${n}${unit}`;
  }
  return '99999999H';
}
/** gRPC spec, "HTTP to gRPC Status Code Mapping" (a response without grpc-status). */
function codeOfHttpStatus(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return Status.INTERNAL;
    case 401:
      return Status.UNAUTHENTICATED;
    case 403:
      return Status.PERMISSION_DENIED;
    case 404:
      return Status.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return Status.UNAVAILABLE;
    default:
      return Status.UNKNOWN;
  }
}

/** gRPC spec, "Errors": the code of a stream reset by the peer before it sent a status. */
function codeOfRstCode(rstCode: number): number {
  switch (rstCode) {
    case h2.NGHTTP2_REFUSED_STREAM:
      return Status.UNAVAILABLE;
    case h2.NGHTTP2_CANCEL:
      return Status.CANCELLED;
    case h2.NGHTTP2_ENHANCE_YOUR_CALM:
      return Status.RESOURCE_EXHAUSTED;
    case h2.NGHTTP2_INADEQUATE_SECURITY:
      return Status.PERMISSION_DENIED;
    default:
      return Status.INTERNAL;
  }
}

function decodeGrpcMessage(raw: unknown): string {
  if (typeof raw !== 'string') return '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The message of a length-prefixed unary response (exactly one uncompressed message). */
function unframe(chunks: Buffer[], total: number): Buffer | GrpcCallError {
  const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  if (body.length < 5) return new GrpcCallError(Status.INTERNAL, 'the server sent no response message');
  if (body[0] !== 0) return new GrpcCallError(Status.INTERNAL, 'the server sent a compressed message that was not asked for');
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length)
    return new GrpcCallError(Status.INTERNAL, `malformed response: ${body.length - 5} bytes after the prefix, ${length} announced`);
  return body.subarray(5);
}

export class H2Channel {
  private session: ClientHttp2Session | undefined;
  private active = 0;
  private closed = false;

  constructor(private readonly options: Readonly<H2ChannelOptions>) {}

  /** The live session, or a new one (after a GOAWAY, a socket error or a close). */
  private current(): ClientHttp2Session {
    const s = this.session;
    if (s && !s.closed && !s.destroyed) return s;
    const session = connectH2('http://localhost', {
      createConnection: () => connectNet(this.options.socketPath),
      // grpc-js disables the session memory check too: large list responses must not trip it.
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
      maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
      // A list response of a few hundred pods is larger than HTTP/2's default 64 KiB window: with it, the
      // runtime stops mid-response until a WINDOW_UPDATE comes back (a round trip through both processes).
      settings: { initialWindowSize: MAX_WINDOW_BYTES },
    });
    session.once('connect', () => session.setLocalWindowSize(MAX_WINDOW_BYTES));
    const drop = () => {
      if (this.session === session) this.session = undefined;
    };
    // Stream errors carry the cause to each call; the session event only retires the session.
    session.on('error', drop);
    session.on('goaway', drop);
    session.on('close', drop);
    session.unref();
    this.session = session;
    return session;
  }

  private hold(session: ClientHttp2Session): void {
    if (this.active++ === 0) session.ref();
  }

  private release(session: ClientHttp2Session): void {
    if (--this.active === 0 && !session.destroyed) session.unref();
  }

  /** One unary call: `message` is the serialized request; resolves with the response message bytes. */
  unary(path: string, message: Buffer, options: UnaryCallOptions): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const fail = (e: GrpcCallError) => reject(e);
      if (this.closed) return fail(new GrpcCallError(Status.UNAVAILABLE, 'the CRI client is closed'));
      if (options.signal?.aborted) return fail(new GrpcCallError(Status.CANCELLED, `cancelled: ${String(options.signal.reason)}`));
      if (message.length > this.options.maxMessageBytes)
        return fail(
          new GrpcCallError(
            Status.RESOURCE_EXHAUSTED,
            `Sent message larger than max (${message.length} vs. ${this.options.maxMessageBytes})`,
          ),
        );
      let session: ClientHttp2Session;
      let stream: ClientHttp2Stream;
      try {
        session = this.current();
        stream = session.request({
          ':method': 'POST',
          ':path': path,
          'content-type': 'application/grpc',
          te: 'trailers',
          'user-agent': USER_AGENT,
          ...(Number.isFinite(options.timeoutMs) ? { 'grpc-timeout': grpcTimeoutHeader(options.timeoutMs) } : {}),
        });
      } catch (err) {
        this.session = undefined;
        return fail(new GrpcCallError(Status.UNAVAILABLE, errorMessage(err)));
      }
      this.hold(session);
      const frame = Buffer.allocUnsafe(5 + message.length);
      frame[0] = 0;
      frame.writeUInt32BE(message.length, 1);
      message.copy(frame, 5);
      stream.end(frame);

      const chunks: Buffer[] = [];
      let received = 0;
      let httpStatus = 0;
      let grpcStatus: number | undefined;
      let grpcMessage = '';
      let local: GrpcCallError | undefined;
      let cause: NodeJS.ErrnoException | undefined;
      const abortWith = (e: GrpcCallError) => {
        local ??= e;
        if (!stream.closed) stream.close(h2.NGHTTP2_CANCEL);
      };
      const timer =
        options.timeoutMs <= MAX_TIMER_MS
          ? setTimeout(() => abortWith(new GrpcCallError(Status.DEADLINE_EXCEEDED, 'Deadline exceeded')), options.timeoutMs)
          : undefined;
      const onAbort = () => abortWith(new GrpcCallError(Status.CANCELLED, `cancelled: ${String(options.signal?.reason)}`));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const statusFrom = (headers: Record<string, unknown>) => {
        if (headers['grpc-status'] === undefined) return;
        grpcStatus = Number(headers['grpc-status']);
        grpcMessage = decodeGrpcMessage(headers['grpc-message']);
      };
      stream.on('response', (headers) => {
        httpStatus = Number(headers[':status']);
        statusFrom(headers); // a trailers-only response
      });
      stream.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > this.options.maxMessageBytes + 5) {
          abortWith(
            new GrpcCallError(
              Status.RESOURCE_EXHAUSTED,
              `Received message larger than max (${received - 5} vs. ${this.options.maxMessageBytes})`,
            ),
          );
          return;
        }
        chunks.push(chunk);
      });
      stream.on('trailers', statusFrom);
      stream.on('error', (err: NodeJS.ErrnoException) => {
        cause ??= err;
      });
      stream.on('close', () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.release(session);
        if (local) return fail(local);
        if (grpcStatus !== undefined) {
          if (grpcStatus !== Status.OK) return fail(new GrpcCallError(grpcStatus, grpcMessage));
          const body = unframe(chunks, received);
          return Buffer.isBuffer(body) ? resolve(body) : fail(body);
        }
        if (httpStatus !== 0 && httpStatus !== 200)
          return fail(new GrpcCallError(codeOfHttpStatus(httpStatus), `Received HTTP status code ${httpStatus}`));
        // The runtime reset this stream (not the connection): the gRPC spec's RST_STREAM table.
        if (cause?.code === 'ERR_HTTP2_STREAM_ERROR' && stream.rstCode)
          return fail(new GrpcCallError(codeOfRstCode(stream.rstCode), `the runtime reset the stream (RST_STREAM code ${stream.rstCode})`));
        if (cause || httpStatus === 0)
          return fail(
            new GrpcCallError(
              Status.UNAVAILABLE,
              cause ? `connection to ${this.options.socketPath}: ${cause.message}` : 'the stream closed before a response',
            ),
          );
        return fail(
          new GrpcCallError(
            codeOfRstCode(stream.rstCode ?? h2.NGHTTP2_INTERNAL_ERROR),
            `the stream closed with RST_STREAM code ${stream.rstCode}`,
          ),
        );
      });
    });
  }

  /** Resolves once a session is connected; retries a failed connect (100 ms, doubling to 1 s) until timeoutMs. */
  async waitForReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let delay = 100;
    for (;;) {
      const error = await new Promise<Error | undefined>((resolve) => {
        const s = this.current();
        if (!s.connecting) return resolve(undefined);
        s.once('connect', () => resolve(undefined));
        s.once('error', (err: Error) => resolve(err));
        s.once('close', () => resolve(new Error('connection closed')));
      });
      if (!error) return;
      if (Date.now() + delay > deadline) throw error;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(1000, delay * 2);
    }
  }

  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = undefined;
  }
}
