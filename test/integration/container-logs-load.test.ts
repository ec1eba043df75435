/**
 * Serving a long container log must not stall the agent (issue 36, item 1):
 * the agent CLI on the embedded simulated runtime serves a 300,000-line log,
 * then follows one written at 1,000 lines/s for 30 s, while /healthz is
 * sampled every 100 ms. Before the fix the main thread froze for minutes (one
 * `close` listener added per written line, removed one by one at the end).
 *
 * The freeze bound here is 1 s, ten times the 100 ms line, so that a
 * loaded CI machine does not fail the test; `npm run bench -- log-serving`
 * measures the same load against the 100 ms line and reports it.
 */
import { appendFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess, podManifest } from '../e2e/agent-harness.js';
import { criLogLines, rssMiB, sampleHealthz } from '../helpers/log-load.js';

const FREEZE_BOUND_MS = 1000;
const RSS_GROWTH_BOUND_MIB = 20;
const LINE_BYTES = 'xxxxxxxxxxxxxxxxxxxx\n'.length;

/** A GET on the kubelet server (self-signed; anonymous allowed by the flag defaults) that counts the bytes it receives. */
function fetchLogs(port: number, path: string, signal?: AbortSignal) {
  let bytes = 0;
  const done = new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, signal }, (res) => {
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', (err) => (signal?.aborted ? resolve(res.statusCode ?? 0) : reject(err)));
    });
    req.on('error', (err) => (signal?.aborted ? resolve(0) : reject(err)));
    req.end();
  });
  return { done, bytes: () => bytes };
}

describe('container logs under load (agent CLI, simulated runtime)', () => {
  const agent = new AgentProcess('sim', 'logs-node', 'logs', ['--worker-threads=1']);
  const rss = () => rssMiB(agent.pid!, (p) => readFileSync(p, 'utf8'));
  const listenerWarnings = () => agent.logs.filter((l) => l.includes('MaxListenersExceededWarning'));
  let logFile = '';

  beforeAll(async () => {
    agent.writeManifest('chatty', podManifest('chatty', 'logs', [{ name: 'app', command: ['sleep', 'infinity'] }]));
    await agent.start();
    await agent.waitPod('Running', 'chatty', (p) => p.status?.phase === 'Running');
    const podDir = readdirSync(join(agent.dir, 'pod-logs')).find((d) => d.startsWith('logs_chatty'));
    if (!podDir) throw new Error(`no log directory for the pod in ${join(agent.dir, 'pod-logs')}`);
    logFile = join(agent.dir, 'pod-logs', podDir, 'app', '0.log');
    readFileSync(logFile);
  });

  afterAll(async () => {
    await agent.stop();
    rmSync(agent.dir, { recursive: true, force: true });
  });

  it('serves 300,000 lines while /healthz answers, in bounded memory, with no listener pile-up', async () => {
    appendFileSync(logFile, criLogLines(300_000, Date.now() - 60_000));
    const rss0 = rss();
    const samples = sampleHealthz(agent.healthzPort);
    const got = fetchLogs(agent.port, '/containerLogs/logs/chatty-logs-node/app');
    expect(await got.done).toBe(200);
    const health = await samples.stop();
    expect(got.bytes()).toBeGreaterThanOrEqual(300_000 * LINE_BYTES);
    expect(health).toMatchObject({ failed: 0 });
    expect(health.count).toBeGreaterThan(0);
    expect(health.maxMs).toBeLessThan(FREEZE_BOUND_MS);
    expect(rss() - rss0).toBeLessThan(RSS_GROWTH_BOUND_MIB);
    expect(listenerWarnings()).toEqual([]);
  });

  it('follows a log written at 1,000 lines/s for 30 s while /healthz answers', async () => {
    const rss0 = rss();
    const samples = sampleHealthz(agent.healthzPort);
    const ac = new AbortController();
    const got = fetchLogs(agent.port, '/containerLogs/logs/chatty-logs-node/app?follow=true&tailLines=0', ac.signal);
    let written = 0;
    const writer = setInterval(() => {
      appendFileSync(logFile, criLogLines(100, Date.now()));
      written += 100;
    }, 100);
    try {
      await new Promise((r) => setTimeout(r, 30_000)); // the duration of the load, not a wait for a condition
    } finally {
      clearInterval(writer);
    }
    await agent.until('the follower received every line written', () => got.bytes() >= written * LINE_BYTES, 30_000);
    ac.abort();
    await got.done;
    const health = await samples.stop();
    expect(health).toMatchObject({ failed: 0 });
    expect(health.maxMs).toBeLessThan(FREEZE_BOUND_MS);
    expect(rss() - rss0).toBeLessThan(RSS_GROWTH_BOUND_MIB);
    expect(listenerWarnings()).toEqual([]);
  }, 120_000);
});
