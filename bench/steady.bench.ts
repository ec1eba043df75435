/**
 * Steady state at N real pods, A/B (`npm run bench -- steady`): kubelet-ts
 * starts N static pods (one container each) on containerd once; then agents
 * of the configurations in --configs take them over in turn, each a restart
 * of the kubelet on the same directories that adopts the running pods, for
 * a steady window each. Between two agents, with none running, the bench
 * makes the relist's two list calls alone (the floor, with the same pods in
 * the same containerd). One spawn serves every window, so a 1000-pod A/B
 * costs one spawn instead of one per configuration.
 *
 * Per window: restart → every pod Running in /pods (adopt), then --settle-s,
 * then --steady-s: relist duration mean / p99 (upstream's buckets) and the
 * relists over 100 ms, relist phases, CRI calls, the agent's CPU and RSS.
 *
 * Writes bench/results/steady.{json,md} (or --out NAME).
 * Args: --pods 1000  --configs "default;default" (as the memory bench's: agent
 *       flags, `node:--flag`, `bin:PATH`)  --steady-s 300  --settle-s 30
 *       --raw-s 120  --timeout-s 3000  --endpoint unix://…
 */
import { performance } from 'node:perf_hooks';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CriClient } from '../src/cri/client.js';
import { histogramSeries, parsePromText } from '../src/common/prom-text.js';
import { subtractHistogram } from '../src/common/histogram-math.js';
import { AgentProcess, podManifest } from '../test/e2e/agent-harness.js';
import { applyAgentConfig } from './lib/agent-config.js';
import { procCpuS, waitQuiet } from './lib/cpu.js';
import { removeNamespace } from './lib/cri-pods.js';
import { memoryMiB } from './lib/peer-agents.js';
import { arg, log, machine, round, writeResults } from './lib/report.js';
import { scrapeMetrics, steadyLists, waitConverged, windowStats, type SteadyLists, type WindowStats } from './lib/steady-window.js';

const PODS = Number(arg('pods', '1000'));
const CONFIGS = arg('configs', 'default;default')
  .split(';')
  .map((c) => c.trim())
  .filter(Boolean);
const STEADY_S = Number(arg('steady-s', '300'));
const SETTLE_S = Number(arg('settle-s', '30'));
const RAW_S = Number(arg('raw-s', '120'));
const TIMEOUT_MS = Number(arg('timeout-s', '3000')) * 1000;
const ENDPOINT = arg('endpoint', process.env.KTS_CRI_ENDPOINT ?? 'unix:///run/kubelet-ts-containerd/containerd.sock');
const OUT = arg('out', 'steady');
const NODE = 'steady-node';
const COMMAND = ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait'];
const GRACE_S = 5;
/** A relist over this is over the issue's line (and lands in upstream's next bucket). */
const LINE_S = 0.1;
const DEFAULT_BIN = resolve('bin/kubelet-ts.js');
/** cgroupsPerQOS false, as the peer bench runs kubelet-ts. */
const BASE_FLAGS = [`--max-pods=${PODS + 20}`, '--v=1', '--cgroups-per-qos=false'];

/** An argument as a shell reads it back. */
const quoted = (a: string) => (/[\s;"'$`\\]/.test(a) ? JSON.stringify(a) : a);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Window {
  config: string;
  /** restart → /healthz, and → every pod Running in /pods */
  healthzS: number;
  adoptS: number;
  steady: WindowStats;
  /** relists in the window that took over LINE_S */
  relistsOverLine: number;
  rssMiB: number;
  hwmMiB: number;
  loadavg: number[];
  /** The two lists alone after this agent stopped, the pods still up. */
  rawLists?: SteadyLists;
  error?: string;
}

/** Relists in the window (between two scrapes) that took longer than LINE_S. */
function overLine(startText: string, endText: string): number {
  const metric = 'kubelet_pleg_relist_duration_seconds';
  const [a] = histogramSeries(parsePromText(startText).samples, metric);
  const [b] = histogramSeries(parsePromText(endText).samples, metric);
  if (!b) return Number.NaN;
  const h = a ? subtractHistogram(b.histogram, a.histogram, metric) : b.histogram;
  const under = h.buckets.find((x) => Math.abs(x.le - LINE_S) < 1e-9)?.count ?? Number.NaN;
  return h.count - under;
}

/** t0 (a spawn or restart) → every pod running through CRI and Running in the agent's /pods, in s. */
async function allRunningS(cri: CriClient, agent: AgentProcess, namespace: string, t0: number): Promise<number> {
  return (await waitConverged(cri, { kind: 'ts', namespace, agent }, PODS, 'p', t0, false, TIMEOUT_MS)).bothMs / 1000;
}

async function rawLists(cri: CriClient): Promise<SteadyLists | undefined> {
  if (RAW_S <= 0) return undefined;
  const l = await steadyLists(cri, RAW_S);
  log(`  raw lists: concurrent mean ${l.concurrentMeanMs} / p99 ${l.concurrentP99Ms} ms; serial ${l.serialMeanMs} / ${l.serialP99Ms}`);
  return l;
}

async function window(cri: CriClient, agent: AgentProcess, namespace: string, config: string): Promise<Window> {
  const w: Partial<Window> = { config };
  applyAgentConfig(agent, config, BASE_FLAGS, DEFAULT_BIN);
  try {
    const t0 = performance.now();
    await agent.start();
    w.healthzS = round((performance.now() - t0) / 1000, 2);
    w.adoptS = round(await allRunningS(cri, agent, namespace, t0), 2);
    log(`  ${config}: healthz ${w.healthzS} s, all Running ${w.adoptS} s; settling ${SETTLE_S} s`);
    await sleep(SETTLE_S * 1000);
    const cpu0 = procCpuS(agent.pid);
    const start = await scrapeMetrics(agent);
    await sleep(STEADY_S * 1000);
    const end = await scrapeMetrics(agent);
    w.steady = windowStats(start, end, procCpuS(agent.pid) - cpu0);
    w.relistsOverLine = overLine(start.text, end.text);
    const mem = memoryMiB(agent.pid);
    w.rssMiB = round(mem.rss, 1);
    w.hwmMiB = round(mem.hwm, 1);
    log(
      `  ${config}: relist mean ${w.steady.relistMeanMs} / p99 ${w.steady.relistP99Ms} ms, ${w.relistsOverLine} of ` +
        `${w.steady.relistCount} over ${LINE_S * 1000} ms; cpu ${w.steady.cpuCores}, rss ${w.rssMiB} MiB`,
    );
  } catch (err) {
    w.error = err instanceof Error ? err.message : String(err);
    log(`  ${config}: FAILED: ${w.error.split('\n')[0]}`);
  } finally {
    w.loadavg = loadavg().map((l) => round(l));
    await agent.stop();
  }
  if (!w.error) w.rawLists = await rawLists(cri);
  return w as Window;
}

function markdown(
  meta: Record<string, unknown>,
  spawn: { config: string; spawnS: number },
  first: SteadyLists | undefined,
  ws: Window[],
): string {
  const fmt = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : String(x));
  const phase = (w: Window, p: string) => {
    const x = w.steady?.relistPhases?.[p];
    return x ? `${x.meanMs} / ${x.p99Ms}` : '–';
  };
  const lines = [
    '# Steady state at N real pods: configurations taking over the same pods',
    '',
    `Machine: ${JSON.stringify(meta.machine)}`,
    '',
    `${PODS} static one-container pods on containerd, started once by \`${spawn.config}\` (${spawn.spawnS} s to all Running); ` +
      `each configuration then restarts the agent on the same directories, adopts the pods, settles ${SETTLE_S} s and is measured ` +
      `over ${STEADY_S} s. Relist p99 is interpolated in upstream's buckets; "over 100 ms" counts the window's relists above the ` +
      `issue's line. The raw lists (both at once, as the agent makes them; one after the other, as upstream does) are made by the ` +
      `bench alone for ${RAW_S} s after each agent stops, the pods still up.`,
    '',
    '| # | configuration | adopt (s) | relist mean / p99 (ms) | over 100 ms | list phase mean / p99 (ms) | records p99 | diff p99 | CPU (cores) | RSS (MiB) | raw lists after: at once mean / p99 / bucket p99 (ms) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  ws.forEach((w, i) => {
    const r = w.rawLists;
    lines.push(
      `| ${i + 1} | \`${w.config}\` | ${fmt(w.adoptS)} | ${w.steady ? `${w.steady.relistMeanMs} / ${w.steady.relistP99Ms}` : '–'} | ` +
        `${w.steady ? `${fmt(w.relistsOverLine)} of ${w.steady.relistCount}` : '–'} | ${phase(w, 'list')} | ` +
        `${w.steady?.relistPhases?.records?.p99Ms ?? '–'} | ${w.steady?.relistPhases?.diff?.p99Ms ?? '–'} | ` +
        `${fmt(w.steady?.cpuCores)} | ${fmt(w.rssMiB)} | ${r ? `${r.concurrentMeanMs} / ${r.concurrentP99Ms} / ${r.concurrentBucketP99Ms}` : '–'} |`,
    );
  });
  if (first)
    lines.push(
      '',
      `Raw lists before the first window: at once ${first.concurrentMeanMs} / ${first.concurrentP99Ms} / ${first.concurrentBucketP99Ms} ms; one after the other ${first.serialMeanMs} / ${first.serialP99Ms} ms.`,
    );
  lines.push('', 'CRI calls in each window:', '');
  ws.forEach((w, i) =>
    lines.push(
      `- ${i + 1}: ${w.steady ? JSON.stringify(w.steady.runtimeCalls) : '–'}${w.error ? ` (failed: ${w.error.split('\n')[0]})` : ''}`,
    ),
  );
  lines.push('', `Run: \`${String(meta.command)}\``, '');
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (CONFIGS.length === 0) throw new Error('--configs: no configuration');
  const cri = new CriClient({ runtimeEndpoint: ENDPOINT, timeoutMs: 120_000 });
  const namespace = `steady-${Date.now().toString(36)}`;
  // The base flags from the start: with them the harness does not make a cgroup root of its own.
  const agent = new AgentProcess(ENDPOINT, NODE, namespace, [...BASE_FLAGS]);
  const meta = {
    machine: machine(),
    command: `npm run bench -- steady ${process.argv.slice(2).map(quoted).join(' ')}`.trim(),
    pods: PODS,
    configs: CONFIGS,
  };
  const windows: Window[] = [];
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping the agent and removing its pods`);
    agent
      .stop()
      .then(() => removeNamespace(cri, namespace))
      .then(() => agent.cleanup())
      .catch((err: unknown) => log(`cleanup after ${sig} failed: ${String(err)}`))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (let i = 0; i < PODS; i++)
      agent.writeManifest(`p${i}`, podManifest(`p-${i}`, namespace, [{ name: 'c', command: COMMAND }], { grace: GRACE_S }));
    const quiet = await waitQuiet({ cpus: cpus().length });
    log(`spawn: ${PODS} pods by \`${CONFIGS[0]}\` (machine busy ${Math.round(quiet.busy * 100)} %)`);
    applyAgentConfig(agent, CONFIGS[0], BASE_FLAGS, DEFAULT_BIN);
    const t0 = performance.now();
    await agent.start();
    const spawn = { config: CONFIGS[0], spawnS: round(await allRunningS(cri, agent, namespace, t0), 1) };
    log(`spawn: all Running in ${spawn.spawnS} s`);
    writeFileSync(join(tmpdir(), `kts-steady-${namespace}-spawn.log`), `${agent.logs.join('\n')}\n`);
    await agent.stop();
    const first = await rawLists(cri);
    for (const config of CONFIGS) {
      windows.push(await window(cri, agent, namespace, config));
      writeResults(OUT, { ...meta, spawn, first, windows }, markdown(meta, spawn, first, windows));
    }
  } finally {
    await agent.stop().catch(() => undefined);
    const t = performance.now();
    const removed = await removeNamespace(cri, namespace).catch(() => 0);
    await agent.cleanup().catch((err: unknown) => log(`cleanup failed: ${String(err)}`));
    log(`removed ${removed} sandboxes in ${round((performance.now() - t) / 1000, 1)} s`);
    cri.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
