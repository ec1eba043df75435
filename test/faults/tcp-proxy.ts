/**
 * A TCP proxy on 127.0.0.1 that the fault suite can cut: the agent reaches the
 * apiserver through it, so the suite partitions only the agent (kubectl and
 * the control plane's own components keep talking to the apiserver).
 *
 * - cut(): destroys every open connection (both ends) and stops listening, so
 *   new connections are refused (ECONNREFUSED), as for an apiserver that is gone;
 * - heal(): listens again on the same port;
 * - breakConnections(): destroys the open connections only (a network blip: every
 *   watch ends and is made again from its last resourceVersion).
 * TLS passes through untouched (the apiserver's certificate names 127.0.0.1).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class CuttableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private port = 0;
  /** Connections accepted so far (for tests and notes). */
  accepted = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on `port` (0: any free port); resolves the port. */
  async listen(port = 0): Promise<number> {
    const server = createServer((client) => this.pipe(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get openConnections(): number {
    return this.sockets.size / 2;
  }

  private pipe(client: Socket): void {
    this.accepted++;
    const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  breakConnections(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** Refuses new connections and ends the open ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((r) => server.close(() => r()));
    this.breakConnections();
    await closed;
  }

  /** Accepts connections again on the same port. */
  async heal(): Promise<void> {
    if (this.server) return;
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
