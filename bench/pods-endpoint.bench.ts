/**
 * The agent's CPU per `/pods` request on a full node (`npm run bench -- pods-endpoint`):
 * the agent CLI on the embedded simulated runtime with `--pods` static pods
 * (default 1000, one `sleep` container each), all Running, then in turns:
 * - idle: the agent's CPU over `--window-s` seconds with no request;
 * - load: `/pods` on the read-only port, one request at a time (the body
 *   read whole), for the same time.
 * CPU per request = (load CPU - idle CPU) / requests. The turns alternate
 * `--turns` times (default 3), each turn's idle beside its load, since the
 * machine's speed drifts over minutes.
 *
 *   npm run bench -- pods-endpoint [--pods N] [--window-s S] [--turns K]
 *     [--agent-bin PATH (another build's bin/kubelet-ts.js: an A/B baseline)] [--out NAME]
 */
import { request } from 'node:http';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AgentProcess, podManifest } from '../test/e2e/agent-harness.js';
import { procCpuS, waitQuiet } from './lib/cpu.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';
import { cpus } from 'node:os';

const PODS = Number(arg('pods', '1000'));
const WINDOW_MS = Number(arg('window-s', '10')) * 1000;
const TURNS = Number(arg('turns', '3'));
const AGENT_BIN = arg('agent-bin', '');
const OUT = arg('out', 'pods-endpoint');

/** GET a path on the read-only port; the body's length and the time to its last byte. */
function get(port: number, path: string): Promise<{ status: number; bytes: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => done({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t0 }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

interface Turn {
  idleCpuS: number;
  loadCpuS: number;
  requests: number;
  bytes: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  cpuPerRequestMs: number;
}

async function measureTurn(agent: AgentProcess): Promise<Turn> {
  const idle0 = procCpuS(agent.pid);
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  const idleCpuS = procCpuS(agent.pid) - idle0;
  const load0 = procCpuS(agent.pid);
  const t0 = performance.now();
  const latencies: number[] = [];
  let bytes = 0;
  while (performance.now() - t0 < WINDOW_MS) {
    const r = await get(agent.readOnlyPort, '/pods');
    if (r.status !== 200) throw new Error(`/pods answered ${r.status}`);
    latencies.push(r.ms);
    bytes = r.bytes;
  }
  // the load window ran a little past WINDOW_MS (the last request): scale the idle CPU to it
  const loadMs = performance.now() - t0;
  const loadCpuS = procCpuS(agent.pid) - load0;
  const requests = latencies.length;
  return {
    idleCpuS: round(idleCpuS, 3),
    loadCpuS: round(loadCpuS, 3),
    requests,
    bytes,
    latencyP50Ms: round(percentile(latencies, 50), 1),
    latencyP99Ms: round(percentile(latencies, 99), 1),
    cpuPerRequestMs: round(((loadCpuS - (idleCpuS * loadMs) / WINDOW_MS) * 1000) / requests, 2),
  };
}

async function main(): Promise<void> {
  const agent = new AgentProcess('sim', 'bench-node', 'bench', [`--max-pods=${PODS + 100}`]);
  if (AGENT_BIN) agent.bin = resolve(AGENT_BIN);
  const turns: Turn[] = [];
  try {
    for (let i = 0; i < PODS; i++)
      agent.writeManifest(`p${i}`, podManifest(`p${i}`, 'bench', [{ name: 'app', command: ['sleep', '3600'] }]));
    await agent.start();
    await agent.until(
      `all ${PODS} pods Running`,
      async () => {
        const pods = await agent.pods();
        return pods.length === PODS && pods.every((p) => p.status?.phase === 'Running');
      },
      300_000,
    );
    await waitQuiet({ cpus: cpus().length, maxBusy: 0.15, timeoutMs: 120_000 });
    for (let t = 0; t < TURNS; t++) turns.push(await measureTurn(agent));
  } finally {
    await agent.stop();
    rmSync(agent.dir, { recursive: true, force: true });
  }
  const perRequest = turns.map((t) => t.cpuPerRequestMs).sort((a, b) => a - b);
  const median = perRequest[Math.floor(perRequest.length / 2)];
  const m = machine();
  const md = [
    '# /pods: the agent’s CPU per request',
    '',
    `\`npm run bench -- pods-endpoint --pods ${PODS} --window-s ${WINDOW_MS / 1000} --turns ${TURNS}${AGENT_BIN ? ` --agent-bin ${AGENT_BIN}` : ''}\`; ` +
      `${String(m.date)}, load ${String(m.loadavg)}.`,
    `Agent CLI on the embedded simulated runtime, ${PODS} static pods Running. Each turn: the agent's CPU (all threads) over ` +
      `${WINDOW_MS / 1000} s with no request, then over ${WINDOW_MS / 1000} s of /pods requests one at a time on the read-only port; ` +
      'CPU per request = (load − idle, scaled to the load window) / requests.',
    '',
    '| turn | idle CPU (s) | load CPU (s) | requests | body (MB) | latency p50 / p99 (ms) | agent CPU per request (ms) |',
    '|---:|---:|---:|---:|---:|---|---:|',
    ...turns.map(
      (t, i) =>
        `| ${i + 1} | ${t.idleCpuS} | ${t.loadCpuS} | ${t.requests} | ${round(t.bytes / 1e6, 2)} | ${t.latencyP50Ms} / ${t.latencyP99Ms} | ${t.cpuPerRequestMs} |`,
    ),
    '',
    `Median CPU per request: **${median} ms**.`,
  ].join('\n');
  writeResults(
    OUT,
    { machine: m, pods: PODS, windowMs: WINDOW_MS, agentBin: AGENT_BIN || undefined, turns, medianCpuPerRequestMs: median },
    md,
  );
  console.log(md);
}

await main();
