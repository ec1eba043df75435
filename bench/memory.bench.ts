/**
 * Memory benchmark (`npm run bench -- memory`): what kubelet-ts holds with N
 * static pods, per configuration, on the simulated runtime in its own process
 * (so the agent's RSS is the agent's alone).
 *
 * Per configuration: N one-container manifests, the agent started, every pod
 * Running in /pods, a settle time, then a window of --steady-s seconds with
 * the agent's RSS sampled each second (median, max), its peak RSS (VmHWM)
 * and thread count, its CPU over the window (all threads, in cores) and its
 * relists over the window (kubelet_pleg_relist_duration_seconds, mean and p99
 * interpolated in upstream's buckets, as the peer bench reports them);
 * then a heap snapshot of the main thread (SIGUSR2 via
 * --heapsnapshot-signal) and of pool worker 0 (/debug/pprof/heap?worker=0),
 * each summarised as total self size and the largest groups by type and
 * constructor. The SharedArrayBuffer sizes for maxPods are listed once
 * (allocated bytes; only written pages are resident).
 *
 * Writes bench/results/memory.{json,md} (or --out NAME).
 * Args: --pods 250  --configs "default;--worker-threads=2;--worker-threads=0"
 *         (a configuration is agent flags; a word `node:--flag` is a node/V8 flag
 *         given after bin/kubelet-ts.js's own, e.g. "node:--sparkplug"; `bin:PATH` runs
 *         another build's bin/kubelet-ts.js, e.g. a baseline checked out and built
 *         elsewhere, with that file's own node flags)
 *       --steady-s 45  --settle-s 15  --no-snapshots
 *       --node-options "…" (added to the agent's NODE_OPTIONS)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyAgentConfig, parseAgentConfig } from './lib/agent-config.js';
import { AgentProcess, binLaunch, podManifest } from '../test/e2e/agent-harness.js';
import { pollUntil } from '../test/helpers/poll.js';
import { compareSources } from '../src/compare/summary.js';
import { createSharedState } from '../src/shared/shared-state.js';
import { summarizeHeapSnapshot, type HeapSummary } from './lib/heap-summary.js';
import { procCpuS } from './lib/cpu.js';
import { memoryMiB } from './lib/peer-agents.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';
import { startSimProcess } from './lib/sim-process.js';

const PODS = Number(arg('pods', '250'));
const CONFIGS = arg('configs', 'default;--worker-threads=2;--worker-threads=0')
  .split(';')
  .map((c) => c.trim())
  .filter(Boolean);
const STEADY_S = Number(arg('steady-s', '45'));
const SETTLE_S = Number(arg('settle-s', '15'));
const SNAPSHOTS = !process.argv.includes('--no-snapshots');
const OUT = arg('out', 'memory');
const NODE_OPTIONS = arg('node-options', '');
const MAX_PODS = PODS + 20;

interface ConfigResult {
  config: string;
  bootS: number;
  rssMedianMiB: number;
  rssMaxMiB: number;
  hwmMiB: number;
  threads: number;
  /** utime + stime of the agent process over the steady window, per second. */
  cpuCores: number;
  /** kubelet_pleg_relist_duration_seconds over the steady window. */
  relistMeanMs: number;
  relistP99Ms: number;
  mainHeap?: HeapSummary;
  workerHeap?: HeapSummary;
  snapshotError?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function threadCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return Number.NaN;
  }
}

function fetchInsecure(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(`${url}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** SIGUSR2 → the main thread writes a snapshot into `dir`; resolves with it once complete. */
async function mainSnapshot(pid: number, dir: string): Promise<string> {
  process.kill(pid, 'SIGUSR2');
  return pollUntil(
    'the main-thread heap snapshot',
    () => {
      const f = readdirSync(dir).find((n) => n.endsWith('.heapsnapshot'));
      if (!f) return undefined;
      const text = readFileSync(join(dir, f), 'utf8');
      try {
        JSON.parse(text);
        return text;
      } catch {
        return undefined; // still being written
      }
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

async function runConfig(endpoint: string, config: string, n: number): Promise<ConfigResult> {
  const namespace = `mem-${Date.now().toString(36)}`;
  const agent = new AgentProcess(endpoint, 'mem-node', namespace);
  // Node flags come after bin/kubelet-ts.js's own, so a V8 flag here overrides the shebang's (the last one wins).
  applyAgentConfig(agent, config, [`--max-pods=${MAX_PODS}`, '--v=1'], agent.bin);
  const diag = mkdtempSync(join(tmpdir(), 'kts-mem-'));
  const nodeOptions = [NODE_OPTIONS, SNAPSHOTS ? `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${diag}` : ''].filter(Boolean).join(' ');
  if (nodeOptions) agent.env = { NODE_OPTIONS: nodeOptions };
  for (let i = 0; i < n; i++) agent.writeManifest(`p${i}`, podManifest(`p${i}`, namespace, [{ name: 'c', command: ['sleep', '100000'] }]));
  try {
    const t0 = performance.now();
    await agent.start();
    await agent.until(
      `${n} pods Running`,
      async () => (await agent.pods()).filter((p) => p.status?.phase === 'Running').length >= n,
      600_000,
    );
    const bootS = (performance.now() - t0) / 1000;
    await sleep(SETTLE_S * 1000);
    const pid = agent.pid!;
    const samples: number[] = [];
    const metrics0 = await (await fetch(agent.metricsUrl)).text();
    const cpu0 = procCpuS(pid);
    const w0 = performance.now();
    for (let s = 0; s < STEADY_S; s++) {
      samples.push(memoryMiB(pid).rss);
      await sleep(1000);
    }
    const cpuCores = (procCpuS(pid) - cpu0) / ((performance.now() - w0) / 1000);
    const metrics1 = await (await fetch(agent.metricsUrl)).text();
    const relist = compareSources([
      { name: config, origin: agent.metricsUrl, start: { text: metrics0, timeMs: w0 }, end: { text: metrics1, timeMs: performance.now() } },
    ]).sources[0].relistDuration;
    const result: ConfigResult = {
      config,
      bootS: round(bootS, 1),
      rssMedianMiB: round(percentile(samples, 50), 1),
      rssMaxMiB: round(Math.max(...samples), 1),
      hwmMiB: round(memoryMiB(pid).hwm, 1),
      threads: threadCount(pid),
      cpuCores: round(cpuCores, 4),
      relistMeanMs: relist ? round(relist.meanS * 1000, 2) : Number.NaN,
      relistP99Ms: relist ? round(relist.p99S * 1000, 2) : Number.NaN,
    };
    if (SNAPSHOTS) {
      try {
        result.mainHeap = summarizeHeapSnapshot(await mainSnapshot(pid, diag));
        if (!parseAgentConfig(config).flags.includes('--worker-threads=0')) {
          result.workerHeap = summarizeHeapSnapshot(await fetchInsecure(`https://127.0.0.1:${agent.port}/debug/pprof/heap?worker=0`));
        }
      } catch (err) {
        result.snapshotError = err instanceof Error ? err.message : String(err);
      }
    }
    console.log(
      `${config}: RSS median ${result.rssMedianMiB} MiB, max ${result.rssMaxMiB}, peak ${result.hwmMiB}, threads ${result.threads}, CPU ${result.cpuCores} cores, relist mean ${result.relistMeanMs} p99 ${result.relistP99Ms} ms, boot ${result.bootS} s`,
    );
    return result;
  } finally {
    await agent.cleanup();
    rmSync(diag, { recursive: true, force: true });
  }
}

function mib(bytes: number): number {
  return round(bytes / 2 ** 20, 1);
}

function heapTable(title: string, h: HeapSummary | undefined): string[] {
  if (!h) return [];
  return [
    `${title}: ${mib(h.totalBytes)} MiB in ${h.nodes} heap nodes; largest groups:`,
    '',
    '| group | count | MiB |',
    '|---|---:|---:|',
    ...h.top.map((g) => `| ${g.group.replace(/\|/g, '\\|').slice(0, 60)} | ${g.count} | ${mib(g.bytes)} |`),
    '',
  ];
}

function markdown(results: ConfigResult[], shared: Record<string, number>, meta: Record<string, unknown>): string {
  const lines = [
    '# Memory: what kubelet-ts holds',
    '',
    `Machine: ${JSON.stringify(meta.machine)}`,
    '',
    `${PODS} static one-container pods on kubelet-ts-sim (its own process), --max-pods=${MAX_PODS}; RSS sampled each second, and the agent's CPU (all threads) and relist durations (\`kubelet_pleg_relist_duration_seconds\`, p99 interpolated in upstream's buckets) measured, over ${STEADY_S} s after every pod is Running plus ${SETTLE_S} s. One run per configuration, in the order listed.`,
    '',
    `Agent started as bin/kubelet-ts.js does: \`${Object.entries(binLaunch().env)
      .map(([k, v]) => `${k}=${v} `)
      .join('')}node ${binLaunch().nodeFlags.join(' ')}\`.`,
    '',
    '| configuration | RSS median (MiB) | RSS max (MiB) | peak RSS (MiB) | threads | steady CPU (cores) | relist mean / p99 (ms) | boot → all Running (s) | main heap (MiB) | worker 0 heap (MiB) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.config} | ${r.rssMedianMiB} | ${r.rssMaxMiB} | ${r.hwmMiB} | ${r.threads} | ${r.cpuCores} | ${r.relistMeanMs} / ${r.relistP99Ms} | ${r.bootS} | ${r.mainHeap ? mib(r.mainHeap.totalBytes) : ''} | ${r.workerHeap ? mib(r.workerHeap.totalBytes) : ''} |`,
    ),
    '',
    `SharedArrayBuffers for maxPods ${MAX_PODS} (allocated; only written pages are resident): ${Object.entries(shared)
      .map(([k, v]) => `${k} ${mib(v)} MiB`)
      .join(', ')}.`,
    '',
  ];
  for (const r of results) {
    lines.push(`## ${r.config}`, '');
    if (r.snapshotError) lines.push(`Heap snapshot failed: ${r.snapshotError}`, '');
    lines.push(...heapTable('Main thread heap', r.mainHeap), ...heapTable('Worker 0 heap', r.workerHeap));
  }
  const extra = `${NODE_OPTIONS ? ` --node-options "${NODE_OPTIONS}"` : ''}${SNAPSHOTS ? '' : ' --no-snapshots'}${OUT === 'memory' ? '' : ` --out ${OUT}`}`;
  lines.push(
    `Run: \`npm run bench -- memory --pods ${PODS} --configs "${CONFIGS.join(';')}" --steady-s ${STEADY_S} --settle-s ${SETTLE_S}${extra}\``,
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kts-mem-sim-'));
  const sim = await startSimProcess(dir, 'none');
  const results: ConfigResult[] = [];
  try {
    for (const config of CONFIGS) results.push(await runConfig(sim.endpoint, config, PODS));
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const state = createSharedState({ maxPods: MAX_PODS });
  const shared = {
    podStatusCache: state.cache.buffer.byteLength,
    relistRecords: state.records.buffer.byteLength,
    metrics: state.metrics.buffer.byteLength,
    imagePullGate: state.imagePullGate.buffer.byteLength,
  };
  const meta = { machine: machine(), pods: PODS, maxPods: MAX_PODS, steadyS: STEADY_S, settleS: SETTLE_S, nodeOptions: NODE_OPTIONS };
  writeResults(OUT, { meta, shared, results }, markdown(results, shared, meta));
}

await main();
