/** The fault suite's cuttable TCP proxy (test/faults/tcp-proxy.ts) against a local echo server. */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CuttableProxy } from '../faults/tcp-proxy.js';

const servers: Server[] = [];
const proxies: CuttableProxy[] = [];
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function echoServer(): Promise<number> {
  const server = createServer((s) => s.pipe(s));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/** Connects to the proxy; resolves the socket, or rejects with the connection error. */
function connect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

function echo(s: Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    s.once('data', (d: Buffer) => resolve(d.toString()));
    s.write(text);
  });
}

const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

describe('CuttableProxy', () => {
  it('forwards, cuts open connections and refuses new ones, then accepts again on the same port after heal', async () => {
    const proxy = new CuttableProxy('127.0.0.1', await echoServer());
    proxies.push(proxy);
    const port = await proxy.listen();
    const a = await connect(port);
    expect(await echo(a, 'hello')).toBe('hello');
    expect(proxy.openConnections).toBe(1);

    await proxy.cut();
    await closed(a);
    expect(proxy.openConnections).toBe(0);
    await expect(connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    await proxy.heal();
    const b = await connect(port);
    expect(await echo(b, 'again')).toBe('again');
    b.destroy();
  });

  it('breakConnections ends the open connections but keeps accepting', async () => {
    const proxy = new CuttableProxy('127.0.0.1', await echoServer());
    proxies.push(proxy);
    const port = await proxy.listen();
    const a = await connect(port);
    expect(await echo(a, 'x')).toBe('x');
    proxy.breakConnections();
    await closed(a);
    const b = await connect(port);
    expect(await echo(b, 'y')).toBe('y');
    expect(proxy.accepted).toBe(2);
    b.destroy();
  });
});
