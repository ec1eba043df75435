/**
 * One exec straight to a kubelet's port, as the apiserver makes it: TLS with
 * the apiserver's kubelet client certificate, `GET /exec/NS/POD/CONTAINER`
 * upgraded to WebSocket with the `v4.channel.k8s.io` protocol (which the
 * runtime's streaming server speaks). No frame is read: the session is over
 * when the runtime's streaming server closes the connection after the
 * command exits, so the time measured is the kubelet's part (TLS,
 * authentication and authorization, finding the container, CRI Exec, the
 * proxy) plus the runtime's exec, without kubectl or the apiserver.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';

const PKI = '/var/lib/kubelet-ts-control-plane/pki';

export interface WsExecTarget {
  port: number;
  namespace: string;
  pod: string;
  container: string;
  command: string[];
}

let creds: { cert: Buffer; key: Buffer } | undefined;

/** Resolves with the milliseconds from connect to the runtime's close; rejects unless the upgrade is answered 101. */
export function wsExec(t: WsExecTarget, timeoutMs = 30_000): Promise<number> {
  creds ??= { cert: readFileSync(`${PKI}/apiserver-kubelet-client.crt`), key: readFileSync(`${PKI}/apiserver-kubelet-client.key`) };
  const query = [...t.command.map((c) => `command=${encodeURIComponent(c)}`), 'output=1', 'error=1'].join('&');
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: t.port, ...creds, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    s.setNoDelay(true);
    const timer = setTimeout(() => s.destroy(new Error(`no close within ${timeoutMs} ms`)), timeoutMs);
    let head = '';
    let upgraded = false;
    s.once('secureConnect', () => {
      s.write(
        `GET /exec/${t.namespace}/${t.pod}/${t.container}?${query} HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\n` +
          'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
          `Sec-WebSocket-Key: ${Buffer.from('kubelet-ts-bench').toString('base64')}\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n`,
      );
    });
    s.on('data', (d: Buffer) => {
      if (upgraded) return;
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      if (!head.startsWith('HTTP/1.1 101')) s.destroy(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
      upgraded = true;
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    s.once('close', () => {
      clearTimeout(timer);
      if (upgraded) resolve(performance.now() - t0);
      else reject(new Error(`closed before an upgrade: ${head.split('\r\n')[0] || 'no answer'}`));
    });
    // The runtime ends the session with a close frame and its FIN: end our side too.
    s.once('end', () => s.end());
  });
}
