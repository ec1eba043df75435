/**
 * The proxy from the kubelet server to the runtime's streaming server for
 * exec, attach and port-forward (upstream proxyStream: an
 * UpgradeAwareHandler with upgradeRequired). The client's upgrade request is
 * sent on to the runtime's one-time URL with its headers (Upgrade,
 * Connection, X-Stream-Protocol-Version, Sec-WebSocket-*), the runtime's
 * answer goes back unchanged, and from then on the bytes flow both ways as
 * they are: SPDY/3.1 and WebSocket alike, with no framing read here.
 *
 * Contract: every socket it is given or opens is closed when either side
 * closes, errors, or stays silent for `idleTimeoutMs` (the kubelet's
 * streamingConnectionIdleTimeout); a half-close (FIN) is passed on to the
 * other side. The returned promise settles when both are closed.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';

/** Headers that are about one hop only and are not sent on (Connection and Upgrade are: the upgrade is the point). */
const HOP_BY_HOP = new Set(['keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'host']);

/** The request line and headers sent to the runtime: the client's, to `target`'s path with the client's query. */
export function backendRequestHead(req: IncomingMessage, target: URL, remoteAddress: string | undefined): string {
  const query = new URL(req.url ?? '/', 'http://kubelet').search;
  const lines = [`${req.method ?? 'GET'} ${target.pathname}${query || target.search} HTTP/1.1`, `Host: ${target.host}`];
  let forwardedFor: string | undefined;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower)) continue;
    if (lower === 'x-forwarded-for') {
      forwardedFor = forwardedFor ? `${forwardedFor}, ${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1];
      continue;
    }
    lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
  }
  if (remoteAddress) forwardedFor = forwardedFor ? `${forwardedFor}, ${remoteAddress}` : remoteAddress;
  if (forwardedFor) lines.push(`X-Forwarded-For: ${forwardedFor}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export interface ProxyOptions {
  /** Close both sides after this long without a byte either way; 0 = never. */
  idleTimeoutMs: number;
  /** Called once with the reason when the backend cannot be reached (the client got a 500 already). */
  onError?(err: Error): void;
}

/** Why the runtime's streaming URL `target` cannot be opened (not http or https), or undefined. */
export function unusableUrl(target: URL): Error | undefined {
  if (target.protocol === 'http:' || target.protocol === 'https:') return undefined;
  return new Error(`the runtime's streaming URL ${target.href} is neither http nor https`);
}

/** Opens the runtime's streaming URL (http or https; runtimes serve loopback). */
export function dial(target: URL): Socket {
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (target.protocol === 'https:') return connectTls({ host, port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
  return connectTcp({ host, port });
}

/**
 * Proxies the upgrade request `req`, whose connection is `client` (with
 * `head`, the bytes read past the headers), to `target`. Resolves when both
 * connections are closed.
 */
export function proxyUpgrade(req: IncomingMessage, client: Duplex, head: Buffer, target: URL, options: ProxyOptions): Promise<void> {
  const err = unusableUrl(target);
  if (err) {
    failClient(client, err);
    options.onError?.(err);
    return Promise.resolve();
  }
  const backend = dial(target);
  // Keep each side writable after the other's FIN, so a half-close is passed on, not turned into a close.
  (client as Partial<Socket>).allowHalfOpen = true;
  backend.allowHalfOpen = true;
  // No Nagle: SPDY and WebSocket frames come in small writes, and each would wait for the peer's delayed ACK
  // (about 40 ms per stream opened; Go's sockets, as upstream's proxy, have TCP_NODELAY too).
  backend.setNoDelay(true);
  (client as Partial<Socket>).setNoDelay?.(true);
  let connected = false;
  const closed = [whenClosed(client), whenClosed(backend)];
  const destroyBoth = () => {
    client.destroy();
    backend.destroy();
  };
  backend.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
    connected = true;
    backend.write(backendRequestHead(req, target, (client as Partial<Socket>).remoteAddress));
    if (head.length > 0) backend.write(head);
    client.pipe(backend);
    backend.pipe(client);
  });
  backend.on('error', (err) => {
    if (!connected) {
      failClient(client, err);
      options.onError?.(err);
    }
    destroyBoth();
  });
  client.on('error', destroyBoth);
  // A side that is fully closed (both directions) takes the other with it.
  client.once('close', () => backend.destroy());
  backend.once('close', () => client.destroy());
  if (options.idleTimeoutMs > 0) {
    for (const s of [client, backend] as Partial<Socket>[]) {
      s.setTimeout?.(options.idleTimeoutMs, destroyBoth);
    }
  }
  return Promise.all(closed).then(() => undefined);
}

/** Resolves once `s` is closed (at once if it already is). */
export function whenClosed(s: Duplex): Promise<void> {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));
}

/** A 500 to a client that got no answer yet (upstream's responder: http.Error(..., 500)). */
function failClient(client: Duplex, err: Error): void {
  const body = `${err.message}\n`;
  client.end(
    `HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}
