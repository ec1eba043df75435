/**
 * The kubelet server's /debug endpoints on a running agent (simulated
 * runtime): run-time verbosity, CPU and heap profiles of the main thread, a
 * worker's heap snapshot, the enableDebuggingHandlers switch, and the
 * individual /healthz checks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../src/common/logger.js';
import { startAgent, type AgentHandle } from '../../src/main/agent.js';
import { parseCommandLine } from '../../src/main/cli.js';
import { freePort } from '../helpers/ports.js';

let dir: string | undefined;
let agent: AgentHandle | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function start(extra: string[] = []) {
  dir = mkdtempSync(join(tmpdir(), 'kts-debug-'));
  const cl = parseCommandLine([
    '--container-runtime-endpoint=sim',
    `--root-dir=${join(dir, 'root')}`,
    `--pod-logs-dir=${join(dir, 'logs')}`,
    `--container-logs-dir=${join(dir, 'containers')}`,
    '--hostname-override=debug-node',
    '--address=127.0.0.1',
    `--port=${await freePort()}`,
    '--read-only-port=0',
    `--healthz-port=${await freePort()}`,
    '--worker-threads=1',
    ...extra,
  ]);
  if (cl.kind !== 'run') throw new Error('unexpected command line');
  agent = await startAgent(cl.config, createLogger({ format: 'json', verbosity: 0, destination: { write: () => {} } }));
  return cl.config;
}

function https(path: string, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: agent!.port, path, method, rejectUnauthorized: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

it('/debug/flags/v reads and sets the verbosity; profiles of the main thread and of a worker', async () => {
  await start();
  expect(await https('/debug/flags/v')).toEqual({ status: 200, body: '0' });
  expect(await https('/debug/flags/v', 'PUT', '4')).toEqual({ status: 200, body: 'successfully set klog.logging.verbosity to 4' });
  expect(await https('/debug/flags/v')).toEqual({ status: 200, body: '4' });
  expect((await https('/debug/flags/v', 'PUT', 'lots')).status).toBe(400);

  const cpu = await https('/debug/pprof/profile?seconds=1');
  expect(cpu.status).toBe(200);
  expect(Array.isArray((JSON.parse(cpu.body) as { nodes: unknown[] }).nodes)).toBe(true);
  const heap = await https('/debug/pprof/heap?seconds=1');
  expect(heap.status).toBe(200);
  expect((JSON.parse(heap.body) as { head: { callFrame: unknown } }).head.callFrame).toBeDefined();
  const snapshot = await https('/debug/pprof/heap?worker=0');
  expect(snapshot.status).toBe(200);
  expect((JSON.parse(snapshot.body) as { snapshot: { node_count: number } }).snapshot.node_count).toBeGreaterThan(0);
  expect((await https('/debug/pprof/heap?worker=7')).status).toBe(404);
  expect((await https('/debug/pprof/profile?seconds=0')).status).toBe(400);
});

it('--enable-debugging-handlers=false answers 405 on the debugging endpoints', async () => {
  const config = await start(['--enable-debugging-handlers=false']);
  for (const path of ['/debug/flags/v', '/debug/pprof/heap', '/runningpods/', '/configz']) {
    expect(await https(path), path).toEqual({ status: 405, body: 'Debug endpoints are disabled.\n' });
  }
  expect((await https('/pods')).status).toBe(200);
  for (const check of ['ping', 'log', 'syncloop']) {
    const r = await fetch(`http://127.0.0.1:${config.healthzPort}/healthz/${check}`);
    expect([r.status, await r.text()]).toEqual([200, 'ok']);
  }
});
