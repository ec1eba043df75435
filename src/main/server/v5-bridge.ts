/**
 * The WebSocket v5 → SPDY bridge for exec and attach: what upstream's
 * apiserver does in its StreamTranslatorHandler (KEP-4006, Kubernetes
 * v1.30+, staging/src/k8s.io/apiserver/pkg/util/proxy/streamtranslator.go
 * and websocket.go), done here in the kubelet because the v1.20.2 apiserver
 * in front of it only proxies bytes and the runtime's streaming server knows
 * WebSocket v1–v4 and SPDY, not v5. Without it kubectl ≥ 1.30 makes two
 * requests per exec (its v5 WebSocket attempt is refused, then SPDY).
 *
 * The kubelet accepts the client's WebSocket itself (subprotocol
 * v5.channel.k8s.io), opens the runtime's one-time URL from CRI Exec/Attach
 * with an upgrade to SPDY/3.1 (remotecommand v4.channel.k8s.io), and copies
 * between them (remotecommand-v5.ts has the mapping): stdin, its half-close
 * and resizes to the runtime; stdout and stderr to the client. When the
 * runtime's error stream ends, its status (the exit code for a non-zero
 * exit; Success when it sent none) goes to the client on the error channel
 * and the WebSocket is closed normally. A runtime that cannot be reached or
 * refuses the upgrade gives the client an InternalError status.
 *
 * Contract (as stream-proxy.ts): both connections are closed when either
 * side goes away or either stays silent for `idleTimeoutMs`; the promise
 * settles when both are closed.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { SpdyConnection, SpdyStream } from './spdy/connection.js';
import { upgradeToSpdy } from './spdy-upgrade.js';
import { whenClosed } from './stream-proxy.js';
import {
  Channel,
  channelMessage,
  channelOfStreamType,
  internalErrorStatus,
  parseClientMessage,
  readyChannel,
  spdyStreamTypes,
  successStatus,
  V4_PROTOCOL,
  V5_PROTOCOL,
  type ChannelOptions,
} from './remotecommand-v5.js';

export interface BridgeOptions {
  /** Close both sides after this long without a byte on one of them; 0 = never. */
  idleTimeoutMs: number;
  /** Called with the reason when the runtime's side failed (the client got an InternalError status). */
  onError?(err: Error): void;
  /** Called with a client message the bridge drops, and why. */
  onIgnored?(reason: string): void;
}

/** How long the client may take to answer the closing handshake before its socket is destroyed. */
const CLOSE_GRACE_MS = 30_000;

const server = new WebSocketServer({
  noServer: true,
  clientTracking: false,
  perMessageDeflate: false,
  handleProtocols: (protocols) => (protocols.has(V5_PROTOCOL) ? V5_PROTOCOL : false),
});

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/**
 * Bridges the v5 WebSocket upgrade `req` (connection `socket`, bytes past
 * its headers `head`) to the runtime's streaming URL `target`, with the
 * streams `o` the runtime was asked for.
 */
export function bridgeV5(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: URL,
  o: ChannelOptions,
  options: BridgeOptions,
): Promise<void> {
  // The runtime is dialled while the WebSocket handshake is answered.
  const spdy = upgradeToSpdy(target, V4_PROTOCOL);
  const spdyClosed = spdy.then(
    ({ socket: backend }) => whenClosed(backend),
    () => undefined,
  );
  const wsClosed = whenClosed(socket);
  let conn: SpdyConnection | undefined;
  let ws: WebSocket | undefined;
  let finished = false;
  const destroyAll = () => {
    socket.destroy();
    conn?.destroy();
  };

  // The WebSocket's end (the client closed or went away, the closing handshake completed, the handshake failed)
  // takes the runtime's side with it.
  wsClosed
    .then(
      () => spdy.then(({ connection }) => connection.destroy()),
      () => undefined,
    )
    .catch(() => undefined);

  const finish = (status: Buffer) => {
    if (finished) return;
    finished = true;
    if (ws && ws.readyState === ws.OPEN) {
      // Read again, if held: the client's answer to the close frame must get through.
      ws.resume();
      ws.send(channelMessage(Channel.Error, status));
      ws.close(1000);
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    } else {
      socket.destroy();
    }
    conn?.close();
    if (conn) setTimeout(() => conn?.destroy(), CLOSE_GRACE_MS).unref();
  };

  server.handleUpgrade(req, socket, head, (accepted) => {
    ws = accepted;
    // ws turns the socket's timeout off when it takes the socket; the idle timeout is set after.
    if (options.idleTimeoutMs > 0) (socket as Partial<Socket>).setTimeout?.(options.idleTimeoutMs, destroyAll);
    ws.on('error', () => socket.destroy());
    ws.send(channelMessage(readyChannel(o)));
    // Client messages wait until the runtime's streams are open.
    ws.pause();
    spdy.then(
      ({ connection, socket: backend }) => {
        conn = connection;
        if (socket.destroyed) return connection.destroy();
        if (options.idleTimeoutMs > 0) backend.setTimeout(options.idleTimeoutMs, destroyAll);
        wire(accepted, connection);
      },
      (err: Error) => {
        options.onError?.(err);
        finish(internalErrorStatus(err.message));
      },
    );
  });

  const wire = (client: WebSocket, connection: SpdyConnection) => {
    const streams = new Map<string, SpdyStream>();
    for (const type of spdyStreamTypes(o)) streams.set(type, connection.openStream([['streamType', type]]));
    const errorChunks: Buffer[] = [];
    let outputHeld = false;
    const error = streams.get('error');
    for (const [type, stream] of streams) {
      const channel = channelOfStreamType(type);
      if (channel === undefined) continue;
      if (channel === Channel.Error) {
        stream.onData = (data) => errorChunks.push(data);
        continue;
      }
      stream.onData = (data) => {
        if (finished || client.readyState !== client.OPEN) return;
        client.send(channelMessage(channel, data));
        // A client that reads slower than the command writes holds the runtime back, not the kubelet's memory.
        if (socket.writableNeedDrain && !outputHeld) {
          outputHeld = true;
          connection.pause();
          socket.once('drain', () => {
            outputHeld = false;
            connection.resume();
          });
        }
      };
    }
    // The runtime writes the status last, then resets every stream: the status is all there once the error stream ends.
    if (error) error.onRemoteClose = () => finish(errorChunks.length > 0 ? Buffer.concat(errorChunks) : successStatus());
    connection.on('close', () => finish(errorChunks.length > 0 ? Buffer.concat(errorChunks) : successStatus()));
    connection.on('drain', () => client.resume());
    client.on('message', (data) => {
      const m = parseClientMessage(toBuffer(data));
      const target = m.kind === 'stdin' ? streams.get('stdin') : m.kind === 'resize' ? streams.get('resize') : undefined;
      if ((m.kind === 'stdin' || m.kind === 'resize') && target) {
        if (!target.write(m.data)) client.pause();
      } else if (m.kind === 'close' && (m.channel === Channel.Stdin || m.channel === Channel.Resize)) {
        streams.get(m.channel === Channel.Stdin ? 'stdin' : 'resize')?.end();
      } else {
        options.onIgnored?.(m.kind === 'ignored' ? m.reason : `${m.kind} on a session without that stream`);
      }
    });
    client.resume();
  };
  return Promise.all([spdyClosed, wsClosed]).then(() => undefined);
}
