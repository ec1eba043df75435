/**
 * Probe overhead on a dense node (`npm run bench -- probes`): the whole agent
 * in this process (main thread, worker pool, prober thread) against
 * kubelet-ts-sim in a child process (per-call latency lognormal median
 * 0.7 ms / p99 5 ms, as the PLEG benchmark), N static pods (default 1000)
 * with one container each. Scenarios, in one run:
 * - none: no probes (the baseline);
 * - exec: one readinessProbe per pod, exec `true` every 1 s (CRI ExecSync);
 * - http: one readinessProbe per pod, httpGet every 1 s against an HTTP
 *   server in another child process (host 127.0.0.1: the sim's pod IPs are
 *   not routable);
 * - exec-inline / none-inline (with --inline): the same with
 *   --worker-threads=0, where the prober runs on the main thread.
 * For each: the agent starts, every pod turns Running (and Ready when probed),
 * then after a settling pause a window (default 30 s) measures the main
 * thread's event-loop lag (1 ms timer, p50/p99/max) and utilisation, the
 * CPU of this process (all its threads: the agent) and of its main thread,
 * the simulator's CPU, and the probes run (prober_probe_total from
 * /metrics/probes). Reported with ratios to `none` of the same run.
 * Args: --pods N --window S --scenarios none,exec,http --inline --sim-latency SPEC
 * Writes bench/results/probes.{json,md}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pod } from '../src/api/pod.js';
import { createLogger } from '../src/common/logger.js';
import { startAgent } from '../src/main/agent.js';
import { parseCommandLine } from '../src/main/cli.js';
import { procCpuS } from './lib/cpu.js';
import { LagProbe } from './lib/lag.js';
import { arg, machine, round, writeResults } from './lib/report.js';
import { startSimProcess } from './lib/sim-process.js';

const PODS = Number(arg('pods', '1000'));
const WINDOW_S = Number(arg('window', '30'));
const SIM_LATENCY = arg('sim-latency', 'lognormal:0.7:5');
const SCENARIOS = [
  ...arg('scenarios', 'none,exec,http').split(','),
  ...(process.argv.includes('--inline') ? ['none-inline', 'exec-inline'] : []),
];
const READY_DEADLINE_MS = 600_000;

interface Scenario {
  name: string;
  probe: 'none' | 'exec' | 'http';
  inline: boolean;
}

function scenario(name: string): Scenario {
  const [probe, mode] = name.split('-');
  if (probe !== 'none' && probe !== 'exec' && probe !== 'http') throw new Error(`unknown scenario ${name}`);
  if (mode !== undefined && mode !== 'inline') throw new Error(`unknown scenario ${name}`);
  return { name, probe, inline: mode === 'inline' };
}

function readinessProbe(s: Scenario, httpPort: number): Record<string, unknown> | undefined {
  const timing = { periodSeconds: 1, timeoutSeconds: 1 };
  if (s.probe === 'exec') return { exec: { command: ['true'] }, ...timing };
  if (s.probe === 'http') return { httpGet: { host: '127.0.0.1', port: httpPort, path: '/healthz' }, ...timing };
  return undefined;
}

function manifest(i: number, probe: Record<string, unknown> | undefined): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${i}`, namespace: 'bench' },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'app', image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sleep', 'infinity'], ...(probe && { readinessProbe: probe }) },
      ],
    },
  });
}

/** A minimal HTTP server in a child process (its CPU is not the agent's); resolves with its port. */
async function startHttpChild(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ['-e', "require('http').createServer((q,s)=>s.end('ok')).listen(0,'127.0.0.1',function(){console.log(this.address().port)})"],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`HTTP server exited (${code})`)));
  });
  return { child, port };
}

/** CPU seconds of this process's main thread (its task has the process id). */
function mainThreadCpuS(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** prober_probe_total by result, summed over pods. */
async function probeTotals(port: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics/probes`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^prober_probe_total\{([^}]*)\} (\S+)/.exec(line);
    if (!m) continue;
    const result = /result="([^"]*)"/.exec(m[1])?.[1] ?? '?';
    out[result] = (out[result] ?? 0) + Number(m[2]);
  }
  return out;
}

async function podCounts(port: number): Promise<{ running: number; ready: number }> {
  const list = (await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] };
  let running = 0;
  let ready = 0;
  for (const p of list.items) {
    if (p.status?.phase === 'Running') running++;
    if (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ready++;
  }
  return { running, ready };
}

interface Result {
  scenario: string;
  workerThreads: string;
  startToAllReadyS: number;
  readyAtEnd: number;
  probesPerS: number;
  probeSuccessShare: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  mainThreadUtilisation: number;
  /** CPU cores (CPU seconds per second) used by this process: the agent, all threads. */
  agentCores: number;
  mainThreadCores: number;
  simCores: number;
  httpServerCores?: number;
  /** Error-level log lines during start-up and during the window. */
  errorLines: { startUp: number; window: number };
  firstErrors: string[];
}

async function run(s: Scenario, [readOnlyPort, port, healthzPort]: number[]): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'kts-bench-probes-'));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  const sim = await startSimProcess(dir, SIM_LATENCY);
  const http = s.probe === 'http' ? await startHttpChild() : undefined;
  const probe = readinessProbe(s, http?.port ?? 0);
  for (let i = 0; i < PODS; i++) writeFileSync(join(manifests, `p${i}.json`), manifest(i, probe));
  const cl = parseCommandLine([
    `--container-runtime-endpoint=${sim.endpoint}`,
    `--pod-manifest-path=${manifests}`,
    `--root-dir=${join(dir, 'root')}`,
    `--pod-logs-dir=${join(dir, 'logs')}`,
    `--container-logs-dir=${join(dir, 'containers')}`,
    '--hostname-override=bench-node',
    '--address=127.0.0.1',
    `--port=${port}`,
    `--read-only-port=${readOnlyPort}`,
    `--healthz-port=${healthzPort}`,
    `--max-pods=${PODS + 10}`,
    ...(s.inline ? ['--worker-threads=0'] : []),
  ]);
  if (cl.kind !== 'run') throw new Error('unexpected command line');
  const errors: string[] = [];
  let errorLines = 0;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) {
        if (!/"level":(50|60)/.test(line)) continue;
        errorLines++;
        if (errors.length < 5) errors.push(line.slice(0, 400));
      }
      cb();
    },
  });
  const t0 = performance.now();
  const agent = await startAgent(cl.config, createLogger({ format: 'json', verbosity: 0, destination: sink }));
  try {
    let counts = { running: 0, ready: 0 };
    for (;;) {
      counts = await podCounts(readOnlyPort).catch(() => counts);
      if (counts.running === PODS && (s.probe === 'none' || counts.ready === PODS)) break;
      if (performance.now() - t0 > READY_DEADLINE_MS) throw new Error(`${s.name}: ${JSON.stringify(counts)} of ${PODS} after 10 min`);
      await sleep(2000);
    }
    const startToAllReadyS = round((performance.now() - t0) / 1000, 1);
    console.error(`${s.name}: all ${PODS} pods ${s.probe === 'none' ? 'Running' : 'Ready'} after ${startToAllReadyS} s; settling`);
    await sleep(10_000);
    (globalThis as { gc?: () => void }).gc?.();

    const before = s.probe === 'none' ? {} : await probeTotals(readOnlyPort);
    const lag = new LagProbe();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadCpuS();
    const sim0 = procCpuS(sim.child.pid);
    const http0 = procCpuS(http?.child.pid);
    const errorsBefore = errorLines;
    const w0 = performance.now();
    lag.start();
    await sleep(WINDOW_S * 1000);
    lag.stop();
    const wallS = (performance.now() - w0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    const mainS = mainThreadCpuS() - main0;
    const simS = procCpuS(sim.child.pid) - sim0;
    const httpS = procCpuS(http?.child.pid) - http0;
    const after = s.probe === 'none' ? {} : await probeTotals(readOnlyPort);
    const delta = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    const probes = Object.keys(after).reduce((n, k) => n + delta(k), 0);
    const end = await podCounts(readOnlyPort);
    const r: Result = {
      scenario: s.name,
      workerThreads: s.inline ? '0 (inline)' : `${cl.config.workerThreads}`,
      startToAllReadyS,
      readyAtEnd: s.probe === 'none' ? end.running : end.ready,
      probesPerS: round(probes / wallS, 1),
      probeSuccessShare: probes === 0 ? 0 : round(delta('successful') / probes, 4),
      lagP50Ms: round(lag.percentileMs(50), 2),
      lagP99Ms: round(lag.percentileMs(99), 2),
      lagMaxMs: round(lag.histogram.max / 1e6, 2),
      mainThreadUtilisation: round(elu.utilization, 3),
      agentCores: round((cpu.user + cpu.system) / 1e6 / wallS, 3),
      mainThreadCores: round(mainS / wallS, 3),
      simCores: round(simS / wallS, 3),
      ...(http && { httpServerCores: round(httpS / wallS, 3) }),
      errorLines: { startUp: errorsBefore, window: errorLines - errorsBefore },
      firstErrors: errors,
    };
    console.error(JSON.stringify(r));
    return r;
  } finally {
    await agent.stop();
    http?.child.kill('SIGTERM');
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const results: Result[] = [];
for (const name of SCENARIOS) {
  const ports = [await freePort(), await freePort(), await freePort()];
  results.push(await run(scenario(name), ports));
  (globalThis as { gc?: () => void }).gc?.();
}

const base = (r: Result) => results.find((b) => b.scenario === (r.scenario.endsWith('-inline') ? 'none-inline' : 'none'));
const ratio = (a: number, b: number | undefined) => (b ? round(a / b, 2) : Number.NaN);
const json = {
  machine: machine(),
  pods: PODS,
  windowS: WINDOW_S,
  simLatency: SIM_LATENCY,
  probe: { periodSeconds: 1, timeoutSeconds: 1, type: 'readiness' },
  results: results.map((r) => ({
    ...r,
    lagP99RatioToNone: ratio(r.lagP99Ms, base(r)?.lagP99Ms),
    agentCpuRatioToNone: ratio(r.agentCores, base(r)?.agentCores),
  })),
};
const rows = json.results.map(
  (r) =>
    `| ${r.scenario} | ${r.workerThreads} | ${r.startToAllReadyS} | ${r.readyAtEnd} | ${r.probesPerS} (${round(r.probeSuccessShare * 100, 1)} %) | ${r.lagP50Ms} / ${r.lagP99Ms} / ${r.lagMaxMs} (${r.lagP99RatioToNone}×) | ${r.mainThreadUtilisation} | ${r.agentCores} (${r.agentCpuRatioToNone}×) | ${r.mainThreadCores} | ${r.simCores} | ${r.httpServerCores ?? ''} | ${r.errorLines.startUp} / ${r.errorLines.window} |`,
);
const md = `# Probe overhead: ${PODS} pods, one readiness probe each every 1 s

The agent in the benchmark process against kubelet-ts-sim in a child process (per-call latency ${SIM_LATENCY});
each scenario starts a fresh sim and agent, waits until every pod is Running (and Ready when probed), lets it
settle for 10 s and measures a ${WINDOW_S} s window. Lag: how late a 1 ms timer on the agent's main thread
fires (p50 / p99 / max, ms). Utilisation: the main thread's event-loop utilisation. CPU in cores (CPU
seconds per second): the agent process (all its threads), its main thread, the simulator, the HTTP server
the httpGet probes ask. Ratios are to the
\`none\` scenario of the same run. ${JSON.stringify(json.machine)}

| scenario | worker threads | start → all Ready (s) | Ready at end | probes/s (successful) | lag p50 / p99 / max ms (p99 ratio) | main-thread utilisation | agent cores (ratio) | main-thread cores | sim cores | HTTP server cores | error log lines (start-up / window) |
|---|---|---:|---:|---|---|---:|---|---:|---:|---:|---|
${rows.join('\n')}

Goal (README, P4): main-thread event-loop lag p99 ≤ 10 ms at 1000 pods.
`;
writeResults('probes', json, md);
console.log(md);
