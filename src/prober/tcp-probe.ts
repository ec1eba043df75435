/**
 * The tcpSocket probe (upstream pkg/probe/tcp DoTCPProbe): success when a TCP
 * connection opens within the timeout; it is then closed at once. Failures
 * carry Go's dial error text.
 */
import net from 'node:net';
import type { Clock } from '../common/clock.js';
import { joinHostPort } from '../handlers/container-port.js';
import type { ProbeOutcome } from './probe-types.js';

export interface ProbeRun {
  outcome: ProbeOutcome;
  output: string;
}

export function doTcpProbe(host: string, port: number, timeoutMs: number, clock: Clock): Promise<ProbeRun> {
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let settled = false;
    const finish = (run: ProbeRun) => {
      if (settled) return;
      settled = true;
      cancel();
      socket.destroy(); // not resetAndDestroy: see http-get.ts closeHard
      resolve(run);
    };
    const cancel = clock.setTimer(timeoutMs, () => finish({ outcome: 'failure', output: `dial tcp ${addr}: i/o timeout` }));
    socket.once('connect', () => finish({ outcome: 'success', output: '' }));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const text =
        err.code === 'ECONNREFUSED'
          ? 'connect: connection refused'
          : err.code === 'EHOSTUNREACH'
            ? 'connect: no route to host'
            : err.code === 'ENETUNREACH'
              ? 'connect: network is unreachable'
              : err.message;
      finish({ outcome: 'failure', output: `dial tcp ${addr}: ${text}` });
    });
  });
}
