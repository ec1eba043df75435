/**
 * Log serving under load (issue 36's line: no /healthz sample slower than
 * 100 ms, RSS growth under 20 MB, no listener warning): the agent CLI on the
 * embedded simulated runtime serves a long container log (`--lines`, default
 * 300,000), then follows one written at `--rate` lines/s (default 1,000) for
 * `--follow-s` seconds (default 30), while /healthz is sampled every 100 ms.
 *
 *   npm run bench -- log-serving [--lines N] [--rate N] [--follow-s S] [--out NAME]
 */
import { appendFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { AgentProcess, podManifest } from '../test/e2e/agent-harness.js';
import { criLogLines, rssMiB, sampleHealthz, type HealthzResult } from '../test/helpers/log-load.js';
import { arg, machine, round, writeResults } from './lib/report.js';

const LINES = Number(arg('lines', '300000'));
const RATE = Number(arg('rate', '1000'));
const FOLLOW_S = Number(arg('follow-s', '30'));
const OUT = arg('out', 'log-serving');

function fetchLogs(port: number, path: string, signal?: AbortSignal) {
  let bytes = 0;
  const done = new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, signal }, (res) => {
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', resolve);
      res.on('error', (err) => (signal?.aborted ? resolve() : reject(err)));
    });
    req.on('error', (err) => (signal?.aborted ? resolve() : reject(err)));
    req.end();
  });
  return { done, bytes: () => bytes };
}

interface Phase {
  phase: string;
  seconds: number;
  bytes: number;
  healthz: HealthzResult;
  rssBeforeMiB: number;
  rssAfterMiB: number;
}

async function main(): Promise<void> {
  const agent = new AgentProcess('sim', 'bench-node', 'bench', ['--worker-threads=1']);
  const rss = () => rssMiB(agent.pid!, (p) => readFileSync(p, 'utf8'));
  const phases: Phase[] = [];
  try {
    agent.writeManifest('chatty', podManifest('chatty', 'bench', [{ name: 'app', command: ['sleep', 'infinity'] }]));
    await agent.start();
    await agent.waitPod('Running', 'chatty', (p) => p.status?.phase === 'Running');
    const podDir = readdirSync(join(agent.dir, 'pod-logs')).find((d) => d.startsWith('bench_chatty'));
    const logFile = join(agent.dir, 'pod-logs', podDir!, 'app', '0.log');
    const path = '/containerLogs/bench/chatty-bench-node/app';

    appendFileSync(logFile, criLogLines(LINES, Date.now() - 60_000));
    let rss0 = rss();
    let samples = sampleHealthz(agent.healthzPort);
    let t0 = performance.now();
    const whole = fetchLogs(agent.port, path);
    await whole.done;
    phases.push({
      phase: `serve ${LINES} lines`,
      seconds: (performance.now() - t0) / 1000,
      bytes: whole.bytes(),
      healthz: await samples.stop(),
      rssBeforeMiB: rss0,
      rssAfterMiB: rss(),
    });

    rss0 = rss();
    samples = sampleHealthz(agent.healthzPort);
    t0 = performance.now();
    const ac = new AbortController();
    const follow = fetchLogs(agent.port, `${path}?follow=true&tailLines=0`, ac.signal);
    const perTick = Math.max(1, Math.round(RATE / 10));
    let written = 0;
    const writer = setInterval(() => {
      appendFileSync(logFile, criLogLines(perTick, Date.now()));
      written += perTick;
    }, 100);
    await new Promise((r) => setTimeout(r, FOLLOW_S * 1000));
    clearInterval(writer);
    await agent.until('the follower caught up', () => follow.bytes() >= written * 21, 60_000);
    ac.abort();
    await follow.done;
    phases.push({
      phase: `follow ${RATE} lines/s for ${FOLLOW_S} s`,
      seconds: (performance.now() - t0) / 1000,
      bytes: follow.bytes(),
      healthz: await samples.stop(),
      rssBeforeMiB: rss0,
      rssAfterMiB: rss(),
    });
  } finally {
    await agent.stop();
    rmSync(agent.dir, { recursive: true, force: true });
  }
  const warnings = agent.logs.filter((l) => l.includes('MaxListenersExceededWarning')).length;
  const rows = phases.map(
    (p) =>
      `| ${p.phase} | ${round(p.seconds)} | ${round(p.bytes / 2 ** 20)} | ${p.healthz.count} | ${p.healthz.failed} | ` +
      `${round(p.healthz.p99Ms, 1)} | ${round(p.healthz.maxMs, 1)} | ${round(p.rssAfterMiB - p.rssBeforeMiB, 1)} |`,
  );
  const m = machine();
  const md = [
    `# Log serving under load`,
    '',
    `\`npm run bench -- log-serving --lines ${LINES} --rate ${RATE} --follow-s ${FOLLOW_S}\`; ${String(m.date)}, load ${String(m.loadavg)}.`,
    'Agent CLI on the embedded simulated runtime, one worker thread; /healthz sampled every 100 ms, one at a time.',
    `Line: no sample over 100 ms, RSS growth under 20 MiB, no listener warning (${warnings} seen).`,
    '',
    '| phase | s | MiB served | healthz samples | failed | p99 ms | max ms | RSS growth MiB |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  writeResults(OUT, { machine: m, lines: LINES, rate: RATE, followSeconds: FOLLOW_S, listenerWarnings: warnings, phases }, md);
  console.log(md);
}

await main();
