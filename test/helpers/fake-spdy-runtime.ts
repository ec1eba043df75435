/**
 * A fake runtime streaming server speaking SPDY/3.1 remotecommand v4 as
 * containerd's does (k8s.io/kubelet's streaming/remotecommand over
 * moby/spdystream): answers the upgrade with 101 and the protocol, takes the
 * client's streams by `streamType`, runs a scripted session, writes a
 * metav1.Status to the error stream, then resets every stream and closes the
 * connection (apimachinery's spdy connection Close). Built on the kubelet's
 * own SPDY connection in its server role.
 *
 * Scripts, by the URL path's last segment:
 *   echo      stdout echoes stdin; at stdin's FIN: "bye" on stderr, exit code 3
 *   tty       stdout says "size WxH" for each resize; at stdin's FIN: Success
 *   nostatus  "out" on stdout, then closes without a status
 *   big       at stdin's FIN, writes `bigBytes` on stdout, then Success
 *   hold      never finishes (for the client going away and the idle timeout)
 * Any other path is refused with 404 "token not found".
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SpdyConnection, type SpdyStream } from '../../src/main/server/spdy/connection.js';

export interface FakeSession {
  script: string;
  request: IncomingMessage;
  streamTypes: string[];
  stdin: Buffer[];
  stdinFin: boolean;
  resizes: string[];
}

const EXIT_3 = {
  metadata: {},
  status: 'Failure',
  message: 'command terminated with non-zero exit code: exit status 3',
  reason: 'NonZeroExitCode',
  details: { causes: [{ reason: 'ExitCode', message: '3' }] },
};

export class FakeSpdyRuntime {
  readonly server: Server;
  readonly sessions: FakeSession[] = [];
  readonly sockets = new Set<Socket>();
  /** The streams each session expects (as the runtime's CRI request said), by script. */
  expected: Record<string, string[]> = {};
  bigBytes = Buffer.alloc(0);

  constructor() {
    this.server = createServer();
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.onUpgrade(req, socket, head));
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
  }

  url(script: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/exec/${script}`;
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }

  private onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    const script = new URL(req.url ?? '/', 'http://runtime').pathname.split('/').pop() ?? '';
    if (!['echo', 'tty', 'nostatus', 'big', 'hold'].includes(script)) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 16\r\n\r\ntoken not found\n');
      return;
    }
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
    );
    const session: FakeSession = { script, request: req, streamTypes: [], stdin: [], stdinFin: false, resizes: [] };
    this.sessions.push(session);
    const conn = new SpdyConnection(socket, 'server', head);
    conn.on('error', () => socket.destroy());
    const streams = new Map<string, SpdyStream>();
    const want = this.expected[script] ?? ['error', 'stdin', 'stdout', 'stderr'];
    const end = (status: object | undefined) => {
      if (status) streams.get('error')?.write(Buffer.from(JSON.stringify(status)));
      for (const s of streams.values()) s.reset();
      socket.end();
    };
    conn.on('stream', (s: SpdyStream) => {
      const type = s.headers.get('streamtype') ?? '';
      session.streamTypes.push(type);
      streams.set(type, s);
      if (streams.size === want.length) this.run(session, streams, end);
    });
  }

  private run(session: FakeSession, streams: Map<string, SpdyStream>, end: (status: object | undefined) => void): void {
    const stdout = streams.get('stdout');
    const stdin = streams.get('stdin');
    if (stdin) {
      stdin.onData = (d) => {
        session.stdin.push(d);
        if (session.script === 'echo') stdout?.write(d);
      };
      stdin.onRemoteClose = (reset) => {
        session.stdinFin = !reset;
        if (reset) return;
        if (session.script === 'echo') {
          streams.get('stderr')?.write(Buffer.from('bye'));
          end(EXIT_3);
        } else if (session.script === 'tty') {
          end({ metadata: {}, status: 'Success' });
        } else if (session.script === 'big') {
          stdout?.write(this.bigBytes);
          end({ metadata: {}, status: 'Success' });
        }
      };
    }
    const resize = streams.get('resize');
    if (resize) {
      resize.onData = (d) => {
        session.resizes.push(d.toString());
        for (const line of d
          .toString()
          .split('\n')
          .filter((l) => l.trim() !== '')) {
          const size = JSON.parse(line) as { Width: number; Height: number };
          stdout?.write(Buffer.from(`size ${size.Width}x${size.Height}`));
        }
      };
    }
    if (session.script === 'nostatus') {
      stdout?.write(Buffer.from('out'));
      end(undefined);
    }
  }
}
