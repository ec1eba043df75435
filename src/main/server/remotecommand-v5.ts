/**
 * The WebSocket remotecommand protocol v5.channel.k8s.io (KEP-4006,
 * Kubernetes v1.30+; k8s.io/apimachinery util/remotecommand constants.go and
 * the apiserver's util/proxy websocket.go), and what it maps to on the
 * runtime's SPDY side (protocol v4.channel.k8s.io, client-go remotecommand
 * v2.go/v3.go/v4.go):
 *
 *   - every message is binary, its first byte the channel: 0 stdin, 1
 *     stdout, 2 stderr, 3 error (a JSON metav1.Status), 4 resize (JSON
 *     {Width,Height}), 255 close: the one byte after it names the channel the
 *     sender is done with (the client half-closes stdin with [255, 0]);
 *   - the SPDY side has one stream per channel, named by the `streamType`
 *     header, created in client-go's order: error, stdin, stdout, stderr
 *     (none with a TTY), resize (only with a TTY).
 *
 * Pure functions; v5-bridge.ts does the I/O.
 */
import type { IncomingMessage } from 'node:http';

export const V5_PROTOCOL = 'v5.channel.k8s.io';
export const V4_PROTOCOL = 'v4.channel.k8s.io';

export const Channel = { Stdin: 0, Stdout: 1, Stderr: 2, Error: 3, Resize: 4, Close: 255 } as const;

export interface ChannelOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** The subprotocols a WebSocket upgrade request offers, in order. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const raw: string | string[] | undefined = req.headers['sec-websocket-protocol'];
  const values: string[] = typeof raw === 'string' ? [raw] : (raw ?? []);
  return values
    .flatMap((v) => v.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/**
 * Upstream's IsWebSocketRequestWithStreamCloseProtocol: a WebSocket upgrade
 * offering v5.channel.k8s.io (whatever else it offers).
 */
export function isV5WebSocketRequest(req: IncomingMessage): boolean {
  return (
    /\bupgrade\b/i.test(req.headers.connection ?? '') &&
    (req.headers.upgrade ?? '').toLowerCase() === 'websocket' &&
    offeredProtocols(req).includes(V5_PROTOCOL)
  );
}

export type ClientMessage =
  | { kind: 'stdin'; data: Buffer }
  | { kind: 'resize'; data: Buffer }
  | { kind: 'close'; channel: number }
  | { kind: 'ignored'; reason: string };

/** What a message from the WebSocket client asks for. */
export function parseClientMessage(message: Buffer): ClientMessage {
  if (message.length === 0) return { kind: 'ignored', reason: 'empty message' };
  const channel = message[0];
  const data = message.subarray(1);
  switch (channel) {
    case Channel.Stdin:
      return { kind: 'stdin', data };
    case Channel.Resize:
      return { kind: 'resize', data };
    case Channel.Close:
      if (data.length !== 1) return { kind: 'ignored', reason: `close signal with ${data.length} bytes, want 1` };
      return { kind: 'close', channel: data[0] };
    default:
      return { kind: 'ignored', reason: `channel ${channel} is not written by clients` };
  }
}

/** A message to the client on `channel`. */
export function channelMessage(channel: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(data.length + 1);
  out[0] = channel;
  data.copy(out, 1);
  return out;
}

/**
 * The channel upstream's translator writes an empty message to right after
 * the upgrade, telling the client the connection is up: stdout, else stderr,
 * else error.
 */
export function readyChannel(o: ChannelOptions): number {
  if (o.stdout) return Channel.Stdout;
  if (o.stderr && !o.tty) return Channel.Stderr;
  return Channel.Error;
}

/** The SPDY streams to open, by `streamType`, in client-go's order. */
export function spdyStreamTypes(o: ChannelOptions): string[] {
  const types = ['error'];
  if (o.stdin) types.push('stdin');
  if (o.stdout) types.push('stdout');
  if (o.stderr && !o.tty) types.push('stderr');
  if (o.tty) types.push('resize');
  return types;
}

/** The WebSocket channel a SPDY stream's data goes to (stdin and resize flow the other way). */
export function channelOfStreamType(type: string): number | undefined {
  return type === 'stdout' ? Channel.Stdout : type === 'stderr' ? Channel.Stderr : type === 'error' ? Channel.Error : undefined;
}

/** metav1.Status Success as upstream's translator writes it when the runtime reported none. */
export function successStatus(): Buffer {
  return Buffer.from(JSON.stringify({ metadata: {}, status: 'Success' }));
}

/** apierrors.NewInternalError(err) as JSON, what upstream's translator writes when the SPDY side fails. */
export function internalErrorStatus(message: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      metadata: {},
      status: 'Failure',
      message: `Internal error occurred: ${message}`,
      reason: 'InternalError',
      details: { causes: [{ message }] },
      code: 500,
    }),
  );
}
