import { createServer } from 'node:net';

// Ports handed out by freePort come from below the kernel's ephemeral range
// (32768–60999 here, net.ipv4.ip_local_port_range), so an outgoing connection
// elsewhere in the run cannot take one between freePort and the agent's
// listen. Each vitest worker draws from its own block of that range, so two
// test files running in parallel do not hand out the same port either.
const RANGE_START = 20_000;
const BLOCK = 600;
const BLOCKS = 20; // 20_000 + 20 × 600 = 32_000, below 32_768
const poolId = Number(process.env.VITEST_POOL_ID ?? process.pid) || 0;
const blockStart = RANGE_START + (poolId % BLOCKS) * BLOCK;
let next = Math.floor(Math.random() * BLOCK);

function canListen(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const s = createServer();
    s.once('error', () => ok(false));
    s.listen(port, '127.0.0.1', () => s.close(() => ok(true)));
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago and is outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < BLOCK; i++) {
    const port = blockStart + (next++ % BLOCK);
    if (await canListen(port)) return port;
  }
  throw new Error(`freePort: no free port in ${blockStart}-${blockStart + BLOCK - 1} on 127.0.0.1`);
}
