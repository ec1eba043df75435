/**
 * The HTTP/1.1 upgrade to SPDY/3.1 on a runtime's streaming URL, as
 * client-go's SPDY round tripper makes it (POST, `Connection: Upgrade`,
 * `Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version` naming the remotecommand
 * protocol): resolves with the SPDY connection once the server answers 101
 * with that protocol; rejects with client-go's "unable to upgrade
 * connection: <body>" when it answers anything else.
 */
import type { Socket } from 'node:net';
import { dial, unusableUrl } from './stream-proxy.js';
import { SpdyConnection } from './spdy/connection.js';

export class UpgradeError extends Error {}

/** A bound on the refusal body read (runtime error texts are short). */
const MAX_BODY = 64 * 1024;

export interface SpdyUpgrade {
  connection: SpdyConnection;
  socket: Socket;
}

/** Upgrades `target` to SPDY/3.1 offering remotecommand protocol `protocol`. */
export function upgradeToSpdy(target: URL, protocol: string): Promise<SpdyUpgrade> {
  const unusable = unusableUrl(target);
  if (unusable) return Promise.reject(new UpgradeError(unusable.message));
  const socket = dial(target);
  socket.setNoDelay(true);
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let status = 0;
    let headEnd = -1;
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(err);
    };
    const refusal = () => {
      const body = buf
        .subarray(headEnd + 4)
        .toString('utf8')
        .trim();
      fail(new UpgradeError(`unable to upgrade connection: ${body || `the runtime answered ${status} without a body`}`));
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (headEnd < 0) {
        headEnd = buf.indexOf('\r\n\r\n');
        if (headEnd < 0) {
          if (buf.length > MAX_BODY) fail(new UpgradeError('unable to upgrade connection: response headers too long'));
          return;
        }
        const lines = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
        status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1] ?? 0);
        if (status === 101) {
          const version = lines.find((l) => /^x-stream-protocol-version:/i.test(l))?.replace(/^[^:]*:\s*/, '');
          if (version !== protocol) {
            return fail(new UpgradeError(`unable to upgrade connection: the runtime chose protocol "${version ?? ''}", not ${protocol}`));
          }
          settled = true;
          socket.off('data', onData);
          socket.off('end', onEnd);
          socket.off('error', fail);
          resolve({ connection: new SpdyConnection(socket, 'client', buf.subarray(headEnd + 4)), socket });
          return;
        }
      }
      if (buf.length - headEnd - 4 > MAX_BODY) return refusal();
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(buf.subarray(0, headEnd).toString('latin1'))?.[1];
      if (length !== undefined && buf.length - headEnd - 4 >= Number(length)) refusal();
    };
    const onEnd = () =>
      headEnd >= 0 ? refusal() : fail(new UpgradeError('unable to upgrade connection: the runtime closed the connection'));
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', fail);
    socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      socket.write(
        `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Length: 0\r\n` +
          `Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`,
      );
    });
  });
}
