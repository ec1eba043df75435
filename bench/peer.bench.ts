/**
 * Peer benchmark (`npm run bench -- peer`): the upstream Go kubelet v1.20.2
 * and kubelet-ts, one after the other on the same containerd, with N static
 * pods, in both orders (a round runs go→ts, the next ts→go). Each agent run:
 *
 * 1. spawn: N manifests are written before the agent starts (a node boot);
 *    spawn → N containers running, seen through CRI (ListContainers by the
 *    run's namespace), and spawn → every pod Running in the agent's /pods;
 * 2. steady: after all are Running plus a settle time, a window of
 *    --steady-s seconds: relist duration mean / p99 from the agent's own
 *    /metrics (kubelet_pleg_relist_duration_seconds, window difference,
 *    histogram quantile over upstream's buckets), relist interval, CRI calls,
 *    the agent's CPU (cores) and RSS at the end of the window;
 * 3. churn: every manifest is deleted and N new ones (other names) written
 *    at once; converged = the runtime runs the N new containers and none of
 *    the old ones (CRI) AND the agent's /pods shows every new pod Running
 *    (its PLEG saw the containers start and the pod was synced with that
 *    status); relist duration during the churn window;
 * 4. the agent stops and the run's pods are removed (not timed).
 *
 * With `raw` in --agents (the full run is `--agents go,ts,raw`), each round
 * first runs the floor: the same spawn and churn made directly over CRI with
 * no agent (bench/lib/raw-peer.ts), --raw-conc pods at a time. Spawn: every
 * pod's RunPodSandbox + CreateContainer + StartContainer; steady: the settle
 * time, then the relist's two list calls alone over the steady window, both
 * at once and one after the other (SteadyLists); churn: every old
 * pod's StopContainer (5 s, the manifests' grace) + StopPodSandbox and the N
 * new pods' calls through one queue, stops first. Converged is the same CRI
 * condition as the agents'; "reported" is the same instant (there is no
 * /pods). containerd's own CPU (utime+stime of the process
 * in $KTS_CONTAINERD_RUN/containerd.pid) is taken over the spawn and churn
 * windows of every run.
 *
 * Pods: one container, `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`
 * (exits on SIGTERM, so churn measures the kubelets, not the grace period),
 * terminationGracePeriodSeconds 5.
 *
 * Writes bench/results/peer.{json,md} (or --out NAME).
 * Args: --sizes 100,250,500  --rounds 2 (round 1 go→ts, round 2 ts→go, …; raw first in each)
 *       --steady-s 90  --settle-s 15  --endpoint unix://…  --timeout-s 900
 *       --agents go,ts (any of go, ts, raw)  --raw-conc 8  --raw-steady-s (default --steady-s)
 *       --ts-args "--flag=… …"  --ts-bin PATH (another build's bin/kubelet-ts.js for ts: an A/B baseline)
 *       --churn no (each run ends after its steady window)
 */
import { performance } from 'node:perf_hooks';
import { cpus, loadavg } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CriClient } from '../src/cri/client.js';
import { podManifest } from '../test/e2e/agent-harness.js';
import { containerdPid, procCpuS, waitQuiet } from './lib/cpu.js';
import { counters, parseProm } from './lib/prom.js';
import { memoryMiB, peerAgent, type PeerKind } from './lib/peer-agents.js';
import { peerMarkdown } from './lib/peer-report.js';
import { RawPeer } from './lib/raw-peer.js';
import { removeNamespace } from './lib/cri-pods.js';
import { writePeerCharts } from './lib/charts.js';
import { arg, log, machine, round, writeResults } from './lib/report.js';
import {
  scrapeMetrics,
  steadyLists,
  waitConverged,
  windowStats,
  type Converged,
  type SteadyLists,
  type Watched,
  type WindowStats,
} from './lib/steady-window.js';

const SIZES = arg('sizes', '100,250,500').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '2'));
const STEADY_S = Number(arg('steady-s', '90'));
const SETTLE_S = Number(arg('settle-s', '15'));
const ENDPOINT = arg('endpoint', process.env.KTS_CRI_ENDPOINT ?? 'unix:///run/kubelet-ts-containerd/containerd.sock');
const TIMEOUT_MS = Number(arg('timeout-s', '900')) * 1000;
type RunKind = PeerKind | 'raw';
const KINDS: readonly string[] = ['go', 'ts', 'raw'];
const AGENTS = arg('agents', 'go,ts').split(',').filter(Boolean) as RunKind[];
for (const a of AGENTS) if (!KINDS.includes(a)) throw new Error(`--agents: unknown ${JSON.stringify(a)} (any of ${KINDS.join(', ')})`);
const RAW_CONC = Number(arg('raw-conc', '8'));
if (!Number.isInteger(RAW_CONC) || RAW_CONC < 1) throw new Error(`--raw-conc: not a positive integer: ${arg('raw-conc', '8')}`);
const RAW_STEADY_S = Number(arg('raw-steady-s', String(STEADY_S)));
/** `--churn no` ends each run after its steady window (for a steady-state run at a large N). */
const CHURN = arg('churn', 'yes') !== 'no';
const TS_ARGS = arg('ts-args', '').split(' ').filter(Boolean);
const TS_BIN = arg('ts-bin', '') ? resolve(arg('ts-bin', '')) : undefined;
const OUT = arg('out', 'peer');
const NODE = 'peer-node';
const COMMAND = ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait'];
const GRACE_S = 5;
/** containerd, whose CPU is taken over the spawn and churn windows (undefined: not found, NaN figures). */
const RUNTIME_PID = containerdPid();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const uniq = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
const s3 = (ms: number) => round(ms / 1000, 3);

/** containerd's CPU seconds (utime+stime of the process) over a run's spawn and churn windows. */
export interface RuntimeCpu {
  /** spawn → converged (all running, and for an agent all reported) */
  spawnS: number;
  /** manifests replaced → converged */
  churnS?: number;
}

export interface AgentRun {
  agent: PeerKind;
  pods: number;
  round: number;
  /** 1 = ran first in its round. */
  position: number;
  loadavgStart: number[];
  loadavgEnd: number[];
  /** spawn → /healthz answering */
  healthzS: number;
  /** spawn → N containers running (CRI) */
  spawnRunningS: number;
  /** spawn → every pod Running in the agent's /pods */
  spawnReportedS: number;
  /** CRI calls from spawn to all reported, per pod, by operation type */
  startupCallsPerPod: Record<string, number>;
  steady: WindowStats;
  /** MiB at the end of the steady window: the agent process, its peak, and its child processes */
  rssMiB: number;
  hwmMiB: number;
  childrenRssMiB: number;
  churn?: {
    /** manifests replaced → runtime runs exactly the new containers */
    runtimeConvergedS: number;
    /** manifests replaced → every new pod Running in /pods */
    reportedS: number;
    /** both at once */
    convergedS: number;
    window: WindowStats;
  };
  runtimeCpu?: RuntimeCpu;
  error?: string;
  logFile: string;
}

/** The floor: the same spawn and churn directly over CRI (bench/lib/raw-peer.ts). */
export interface RawRun {
  agent: 'raw';
  pods: number;
  round: number;
  position: number;
  /** pods created or stopped at a time */
  concurrency: number;
  loadavgStart: number[];
  loadavgEnd: number[];
  /** first call → N containers running (CRI) */
  spawnRunningS: number;
  /** the same instant as spawnRunningS (no agent to report) */
  spawnReportedS: number;
  /** first call → the last StartContainer returned */
  spawnCallsS: number;
  /** The machine's MemAvailable drop from before the spawn to N running (MiB): what N pods cost the node (shims, pause, containers). */
  spawnMemMiB?: number;
  /** The relist's floor with the N pods up: the two list calls alone (see steadyLists). */
  steadyLists?: SteadyLists;
  churn?: {
    runtimeConvergedS: number;
    /** the same instant as runtimeConvergedS */
    reportedS: number;
    convergedS: number;
    /** first call → the last call returned */
    callsS: number;
  };
  runtimeCpu?: RuntimeCpu;
  error?: string;
}

export type PeerRun = AgentRun | RawRun;

/** A raw run's CRI work from t0 while waitConverged watches it (and stops if the work fails); callsMs = t0 → the work's last call returned. */
async function convergeWhile(
  work: Promise<void>,
  t0: number,
  wait: (signal: AbortSignal) => Promise<Converged>,
): Promise<Converged & { callsMs: number }> {
  const ac = new AbortController();
  const done = work.then(() => performance.now() - t0);
  done.catch((err: unknown) => ac.abort(err));
  const c = await wait(ac.signal);
  return { ...c, callsMs: await done };
}

/** The agent or raw run going on now, for the interrupt handler. */
let current: { namespace: string; stop(): Promise<void>; cleanup(): Promise<void> } | undefined;

async function agentRun(cri: CriClient, kind: PeerKind, n: number, roundNo: number, position: number): Promise<AgentRun> {
  const namespace = `peer-${kind}-${uniq()}`;
  const agent = peerAgent(kind, namespace, {
    endpoint: ENDPOINT,
    nodeName: NODE,
    namespace,
    maxPods: n + 20,
    tsArgs: TS_ARGS,
    tsBin: TS_BIN,
  });
  current = agent;
  const logFile = join(tmpdir(), `kts-peer-${namespace}.log`);
  const manifest = (gen: string, i: number) => podManifest(`${gen}-${i}`, namespace, [{ name: 'c', command: COMMAND }], { grace: GRACE_S });
  const run: Partial<AgentRun> = { agent: kind, pods: n, round: roundNo, position, loadavgStart: loadavg().map((l) => round(l)), logFile };
  try {
    for (let i = 0; i < n; i++) agent.writeManifest(`a-${i}`, manifest('a', i));
    const spawnCpu0 = procCpuS(RUNTIME_PID);
    const t0 = performance.now();
    await agent.start();
    run.healthzS = s3(performance.now() - t0);
    const spawn = await waitConverged(cri, { kind, namespace, agent }, n, 'a', t0, false, TIMEOUT_MS);
    run.runtimeCpu = { spawnS: round(procCpuS(RUNTIME_PID) - spawnCpu0, 2) };
    run.spawnRunningS = s3(spawn.runtimeMs);
    run.spawnReportedS = s3(spawn.reportedMs);
    const startupOps = counters(parseProm(await agent.metrics()), 'kubelet_runtime_operations_total', 'operation_type');
    run.startupCallsPerPod = Object.fromEntries(
      Object.entries(startupOps)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => [k, round(v / n, 2)]),
    );
    log(`  ${kind} ${n}: running ${run.spawnRunningS} s (CRI), reported ${run.spawnReportedS} s; settling ${SETTLE_S} s`);
    await sleep(SETTLE_S * 1000);

    const cpu0 = procCpuS(agent.pid);
    const start = await scrapeMetrics(agent);
    await sleep(STEADY_S * 1000);
    const end = await scrapeMetrics(agent);
    run.steady = windowStats(start, end, procCpuS(agent.pid) - cpu0);
    const mem = memoryMiB(agent.pid);
    run.rssMiB = round(mem.rss, 1);
    run.hwmMiB = round(mem.hwm, 1);
    run.childrenRssMiB = round(mem.childrenRss, 1);
    log(
      `  ${kind} ${n}: steady relist mean ${run.steady.relistMeanMs} ms p99 ${run.steady.relistP99Ms} ms (${run.steady.relistCount}), ` +
        `cpu ${run.steady.cpuCores} cores, rss ${run.rssMiB} MiB`,
    );

    if (!CHURN) return run as AgentRun;
    const churnCpu0 = procCpuS(agent.pid);
    const churnStart = await scrapeMetrics(agent);
    const churnRuntimeCpu0 = procCpuS(RUNTIME_PID);
    const t1 = performance.now();
    for (let i = 0; i < n; i++) agent.deleteManifest(`a-${i}`);
    for (let i = 0; i < n; i++) agent.writeManifest(`b-${i}`, manifest('b', i));
    const churn = await waitConverged(cri, { kind, namespace, agent }, n, 'b', t1, true, TIMEOUT_MS);
    run.runtimeCpu.churnS = round(procCpuS(RUNTIME_PID) - churnRuntimeCpu0, 2);
    const churnEnd = await scrapeMetrics(agent);
    run.churn = {
      runtimeConvergedS: s3(churn.runtimeMs),
      reportedS: s3(churn.reportedMs),
      convergedS: s3(churn.bothMs),
      window: windowStats(churnStart, churnEnd, procCpuS(agent.pid) - churnCpu0),
    };
    log(
      `  ${kind} ${n}: churn converged ${run.churn.convergedS} s (runtime ${run.churn.runtimeConvergedS} s, reported ${run.churn.reportedS} s)`,
    );
  } catch (err) {
    run.error = err instanceof Error ? err.message : String(err);
    log(`  ${kind} ${n}: FAILED: ${run.error.split('\n')[0]}`);
  } finally {
    run.loadavgEnd = loadavg().map((l) => round(l));
    writeFileSync(logFile, `${agent.logs().join('\n')}\n`);
    await agent.stop().catch(() => undefined);
    const t = performance.now();
    const removed = await removeNamespace(cri, namespace).catch(() => 0);
    await agent.cleanup().catch((err: unknown) => log(`  ${kind} cleanup failed: ${String(err)}`));
    log(`  ${kind} ${n}: removed ${removed} sandboxes in ${s3(performance.now() - t)} s`);
    current = undefined;
  }
  return run as AgentRun;
}

/** The machine's MemAvailable (MiB), from /proc/meminfo. */
function memAvailableMiB(): number {
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** The floor: spawn and churn of n pods directly over CRI, RAW_CONC at a time, with the agents' convergence conditions. */
async function rawRun(cri: CriClient, n: number, roundNo: number, position: number): Promise<RawRun> {
  const namespace = `peer-raw-${uniq()}`;
  // Its own connection, as an agent has.
  const rawCri = new CriClient({ runtimeEndpoint: ENDPOINT, timeoutMs: 120_000 });
  const raw = new RawPeer(rawCri, { namespace, nodeName: NODE, concurrency: RAW_CONC, command: COMMAND, graceS: GRACE_S });
  current = raw;
  const run: Partial<RawRun> = {
    agent: 'raw',
    pods: n,
    round: roundNo,
    position,
    concurrency: RAW_CONC,
    loadavgStart: loadavg().map((l) => round(l)),
  };
  const watch = (signal: AbortSignal): Watched => ({ kind: 'raw', namespace, signal });
  try {
    const spawnCpu0 = procCpuS(RUNTIME_PID);
    const mem0 = memAvailableMiB();
    const t0 = performance.now();
    const spawn = await convergeWhile(raw.spawn('a', n), t0, (signal) => waitConverged(cri, watch(signal), n, 'a', t0, false, TIMEOUT_MS));
    run.runtimeCpu = { spawnS: round(procCpuS(RUNTIME_PID) - spawnCpu0, 2) };
    run.spawnRunningS = s3(spawn.runtimeMs);
    run.spawnReportedS = s3(spawn.reportedMs);
    run.spawnCallsS = s3(spawn.callsMs);
    const mem1 = memAvailableMiB();
    run.spawnMemMiB = round(mem0 - mem1, 0);
    log(
      `  raw ${n}: running ${run.spawnRunningS} s (CRI; last call returned ${run.spawnCallsS} s), C=${RAW_CONC}; ` +
        `MemAvailable ${run.spawnMemMiB} MiB lower, ${round(mem1, 0)} MiB left`,
    );
    if (RAW_STEADY_S > 0) {
      await sleep(SETTLE_S * 1000);
      run.steadyLists = await steadyLists(rawCri, RAW_STEADY_S);
      const l = run.steadyLists;
      log(
        `  raw ${n}: lists concurrent mean ${l.concurrentMeanMs} ms p99 ${l.concurrentP99Ms}; serial ${l.serialMeanMs} / ${l.serialP99Ms}`,
      );
    }

    if (!CHURN) return run as RawRun;
    const churnCpu0 = procCpuS(RUNTIME_PID);
    const t1 = performance.now();
    const churn = await convergeWhile(raw.churn('a', 'b', n), t1, (signal) =>
      waitConverged(cri, watch(signal), n, 'b', t1, true, TIMEOUT_MS),
    );
    run.runtimeCpu.churnS = round(procCpuS(RUNTIME_PID) - churnCpu0, 2);
    run.churn = {
      runtimeConvergedS: s3(churn.runtimeMs),
      reportedS: s3(churn.reportedMs),
      convergedS: s3(churn.bothMs),
      callsS: s3(churn.callsMs),
    };
    log(`  raw ${n}: churn converged ${run.churn.convergedS} s (last call returned ${run.churn.callsS} s)`);
  } catch (err) {
    run.error = err instanceof Error ? err.message : String(err);
    log(`  raw ${n}: FAILED: ${run.error.split('\n')[0]}`);
  } finally {
    run.loadavgEnd = loadavg().map((l) => round(l));
    await raw.stop();
    const t = performance.now();
    const removed = await removeNamespace(cri, namespace).catch(() => 0);
    await raw.cleanup();
    rawCri.close();
    log(`  raw ${n}: removed ${removed} sandboxes in ${s3(performance.now() - t)} s`);
    current = undefined;
  }
  return run as RawRun;
}

async function main(): Promise<void> {
  const cri = new CriClient({ runtimeEndpoint: ENDPOINT, timeoutMs: 120_000 });
  const runs: PeerRun[] = [];
  const meta = {
    machine: machine(),
    command: `node --import tsx bench/peer.bench.ts ${process.argv.slice(2).join(' ')}`.trim(),
    endpoint: ENDPOINT,
    steadyS: STEADY_S,
    settleS: SETTLE_S,
    tsArgs: TS_ARGS,
    ...(TS_BIN && { tsBin: TS_BIN }),
    agents: AGENTS,
    ...(AGENTS.includes('raw') ? { rawConcurrency: RAW_CONC } : {}),
    runtimePid: RUNTIME_PID ?? null,
  };
  if (!RUNTIME_PID) log(`containerd's pid not found (KTS_CONTAINERD_RUN/containerd.pid): no containerd CPU figures`);
  const agents = AGENTS.filter((k): k is PeerKind => k !== 'raw');
  try {
    for (const n of SIZES) {
      for (let r = 1; r <= ROUNDS; r++) {
        // The floor first in every round, then the agents in alternating order.
        const order: RunKind[] = [...(AGENTS.includes('raw') ? ['raw' as const] : []), ...(r % 2 === 1 ? agents : [...agents].reverse())];
        log(`== ${n} pods, round ${r}: ${order.join(' → ')}`);
        for (const [i, kind] of order.entries()) {
          // Every run starts on a quiet machine: the previous run's pods leave the kernel busy for minutes.
          const quiet = await waitQuiet({ cpus: cpus().length });
          log(`  ${kind}: machine busy ${Math.round(quiet.busy * 100)} % after waiting ${quiet.waitedS} s for it to settle`);
          runs.push(kind === 'raw' ? await rawRun(cri, n, r, i + 1) : await agentRun(cri, kind, n, r, i + 1));
        }
        writeResults(OUT, { ...meta, runs }, peerMarkdown(runs, meta));
      }
    }
  } finally {
    cri.close();
  }
  writeResults(OUT, { ...meta, runs }, peerMarkdown(runs, meta));
  // The charts (fixed names, shown in the README) follow bench/results/peer.json: a run under another name
  // leaves them alone (`npm run bench -- charts` redraws them).
  if (OUT === 'peer') writePeerCharts(runs, meta.machine);
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping the running agent (or raw run) and removing its pods`);
    const running = current;
    const cri = new CriClient({ runtimeEndpoint: ENDPOINT, timeoutMs: 60_000 });
    (async () => {
      if (running) {
        await running.stop().catch(() => undefined);
        await removeNamespace(cri, running.namespace).catch(() => undefined);
        await running.cleanup().catch(() => undefined);
      }
    })()
      .catch((err: unknown) => log(`cleanup after ${sig} failed: ${String(err)}`))
      .finally(() => {
        cri.close();
        process.exit(130);
      });
  });
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
