/**
 * A port in use, as upstream: the kubelet server's port is fatal with a clear
 * error naming the setting; the healthz port is retried until it is free.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { ListenError } from '../../src/common/errors.js';
import { createLogger } from '../../src/common/logger.js';
import { startAgent, type AgentHandle } from '../../src/main/agent.js';
import { parseCommandLine } from '../../src/main/cli.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

let dir: string | undefined;
let agent: AgentHandle | undefined;
let blocker: Server | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  if (blocker?.listening) await new Promise((r) => blocker!.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const occupy = async (port: number) => {
  blocker = createServer();
  await new Promise<void>((r) => blocker!.listen(port, '127.0.0.1', r));
};

async function configFor(ports: { port: number; healthz: number }) {
  dir = mkdtempSync(join(tmpdir(), 'kts-ports-'));
  const cl = parseCommandLine([
    '--container-runtime-endpoint=sim',
    `--root-dir=${join(dir, 'root')}`,
    `--pod-logs-dir=${join(dir, 'logs')}`,
    `--container-logs-dir=${join(dir, 'containers')}`,
    '--hostname-override=ports-node',
    '--address=127.0.0.1',
    `--port=${ports.port}`,
    '--read-only-port=0',
    `--healthz-port=${ports.healthz}`,
    '--worker-threads=0',
  ]);
  if (cl.kind !== 'run') throw new Error('unexpected command line');
  return cl.config;
}

function sink() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger({ format: 'json', verbosity: 0, destination: stream }) };
}

it('the kubelet server port in use is a clear, fatal error naming --port', async () => {
  const port = await freePort();
  await occupy(port);
  const config = await configFor({ port, healthz: await freePort() });
  const start = startAgent(config, sink().logger);
  await expect(start).rejects.toBeInstanceOf(ListenError);
  await expect(start).rejects.toThrow(
    `cannot serve the kubelet server on 127.0.0.1:${port} (--port / port): the port is already in use (another kubelet running?)`,
  );
});

it('the healthz port in use is logged and retried until it is free', async () => {
  const healthz = await freePort();
  await occupy(healthz);
  const config = await configFor({ port: await freePort(), healthz });
  const { lines, logger } = sink();
  agent = await startAgent(config, logger);
  const failure = await pollUntil('the healthz failure line', () => lines.find((l) => l.msg === 'Failed to start healthz server'));
  expect(failure.err).toMatch(
    /cannot serve the healthz server on 127\.0\.0\.1:\d+ \(--healthz-port \/ healthzPort\): the port is already in use/,
  );
  await new Promise((r) => blocker!.close(r));
  const ok = await pollUntil(
    'healthz to answer once the port is free',
    async () => (await fetch(`http://127.0.0.1:${healthz}/healthz`).catch(() => undefined))?.ok,
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  expect(ok).toBe(true);
});
