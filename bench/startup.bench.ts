/**
 * Pod startup benchmark (`npm run bench -- startup`, i.e.
 * `node --expose-gc --import tsx bench/startup.bench.ts`): a batch of pods
 * (1 container, `sleep 3600`) from static-pod manifests, agent vs a raw CRI
 * script in the same run.
 *
 * Scenarios:
 * - containerd: 100 pods on the real containerd (scripts/containerd.sh up);
 * - sim: 1000 pods on kubelet-ts-sim (one child process, latency model
 *   default=lognormal:0.7:5).
 *
 * For each scenario:
 * 1. warm-up: 2 raw pods and a 2-pod agent run (image/snapshot caches, disk cache of dist/);
 * 2. raw: runRawPod (RunPodSandbox + CreateContainer + StartContainer) for every pod,
 *    at concurrency C (containerd: 8 and 16; sim: 8 and 32). Wall = batch start →
 *    last StartContainer returned. Per-pod = batch start → that pod's StartContainer
 *    returned (comparable with the agent's config.seen → started_at: all pods of a
 *    batch are seen at once). Removed afterwards (not timed). Then the same at
 *    C=8 with the kubelet's own sandbox and container configs (lib/raw-kubelet-pod.ts:
 *    seccomp RuntimeDefault for the pause container as upstream, DNS, labels, ...),
 *    and at C=8 with the kubelet's work for each pod (also its files and status
 *    reads: five calls per pod, as the agent makes; lib/raw-kubelet-pod.ts);
 * 3. agent: all manifests written before the agent starts (a node boot: the first
 *    file-source SET holds every pod), then the CLI is spawned. Wall to all Running =
 *    spawn → first /pods poll where every pod is phase Running with every container
 *    running (also reported from /healthz answering and from the first config.seen).
 *    Per-pod startup = kubernetes.io/config.seen (RFC3339Nano, when the kubelet first
 *    saw the pod) → the container's CRI started_at (ns). Then /metrics:
 *    kubelet_pod_worker_duration_seconds and kubelet_runtime_operations_duration_seconds.
 *
 * Every timed phase (each raw batch, the agent) starts once the machine is
 * quiet (waitQuiet: under 15 % busy over 5 s): the kernel and the shims go on
 * tearing down the previous batch for seconds after its pods are removed.
 *
 * Headline ratio: agent wall (from spawn) / raw wall at C=8. The agent's effective CRI
 * concurrency is not fixed (up to 12 concurrent pod syncs over 2 worker threads, each
 * SyncPod calling the runtime in sequence), so C=8 is the FACTS figure for containerd
 * and the higher C is reported beside it.
 *
 * Writes bench/results/startup.{json,md} (or --out NAME).
 * Args: --scenarios containerd,sim  --containerd-pods 100  --sim-pods 1000
 *       --containerd-endpoint unix:///run/kubelet-ts-containerd/containerd.sock
 *       --containerd-conc 8,16  --sim-conc 8,32  --kubelet-conc 8 ('' = none)  --work-conc 8 ('' = none)  --sim-latency lognormal:0.7:5
 *       --timeout-s 600  --agent-args "--worker-threads=2 ..." (extra agent flags, space separated)
 *       --agent-node-flags "--cpu-prof --cpu-prof-dir=/tmp/prof" (node flags for the agent process only)
 *       --agent-bin PATH (another build's bin/kubelet-ts.js, with its dist/ beside it: an A/B baseline)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Pod } from '../src/api/pod.js';
import { CriClient } from '../src/cri/client.js';
import { runRawPod, SIM_BUSYBOX_IMAGE } from '../src/sim/populate.js';
import { runKubeletConfigPod } from './lib/raw-kubelet-pod.js';
import { PresentImages } from '../src/workers/sync/present-images.js';
import { AgentProcess, podManifest } from '../test/e2e/agent-harness.js';
import { arg, log, machine, percentile, round, writeResults } from './lib/report.js';
import { startSimProcess } from './lib/sim-process.js';
import { cpus } from 'node:os';
import { containerdPid, cpuStart, procCpuS, setRuntimePid, threadCpuS, waitQuiet, type CpuWindow } from './lib/cpu.js';
import { counters, histograms, parseProm, type HistSummary } from './lib/prom.js';
import { markdown, writeStartupCharts, type Quiet } from './lib/startup-report.js';
import { criTimes, removeNamespace } from './lib/cri-pods.js';

const SCENARIOS = arg('scenarios', 'containerd,sim').split(',').filter(Boolean);
const CD_PODS = Number(arg('containerd-pods', '100'));
const SIM_PODS = Number(arg('sim-pods', '1000'));
const CD_ENDPOINT = arg('containerd-endpoint', 'unix:///run/kubelet-ts-containerd/containerd.sock');
const CD_CONC = arg('containerd-conc', '8,16').split(',').map(Number);
const SIM_CONC = arg('sim-conc', '8,32').split(',').map(Number);
const KUBELET_CONC = arg('kubelet-conc', '8').split(',').filter(Boolean).map(Number);
const WORK_CONC = arg('work-conc', '8').split(',').filter(Boolean).map(Number);

/** minimal: runRawPod; kubelet: the kubelet's configs, same three calls; work: also its files and status reads (lib/raw-kubelet-pod.ts). */
type RawKind = 'minimal' | 'kubelet' | 'work';
const RAW_KIND_SUFFIX: Record<RawKind, string> = { minimal: '', kubelet: ', kubelet configs', work: ', kubelet work' };
const SIM_LATENCY = arg('sim-latency', 'lognormal:0.7:5');
const TIMEOUT_MS = Number(arg('timeout-s', '600')) * 1000;
const AGENT_ARGS = arg('agent-args', '').split(' ').filter(Boolean);
const AGENT_NODE_FLAGS = arg('agent-node-flags', '').split(' ').filter(Boolean);
const AGENT_BIN = arg('agent-bin', '');
const OUT = arg('out', 'startup');
const NODE = 'bench-node';
const CONFIG_SEEN = 'kubernetes.io/config.seen';
const COMMAND = ['sleep', '3600'];
const IMAGE = SIM_BUSYBOX_IMAGE; // docker.io/kubelet-ts/busybox:1.0, on containerd and in the sim

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => round(x, 1);
const uniq = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;

export interface RawResult {
  path: string;
  concurrency: number;
  pods: number;
  wallS: number;
  perPodP50Ms: number;
  perPodP99Ms: number;
  /** one pod's own three calls (RunPodSandbox → StartContainer returned) */
  servicePodP50Ms: number;
  servicePodP99Ms: number;
  /** CRI view: batch start → container started_at */
  criStartedP50Ms: number;
  criStartedP99Ms: number;
  /** batch start → each pod's StartContainer returned, ms (for the CDF chart) */
  perPodMs: number[];
  cpu: CpuWindow;
  quiet?: Quiet;
}

async function rawRun(
  cri: CriClient,
  n: number,
  concurrency: number,
  namespace: string,
  logRoot: string,
  kind: RawKind = 'minimal',
): Promise<RawResult> {
  const fromBatch = new Array<number>(n);
  const service = new Array<number>(n);
  const cpu = cpuStart();
  const t0Wall = Date.now();
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  const presentImages = new PresentImages(); // the batch's, as each agent thread keeps its own
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const b = performance.now();
      const name = `p-${i}-${NODE}`;
      const uid = `${namespace}-uid-${i}`;
      if (kind !== 'minimal') {
        const manifest = podManifest(`p-${i}`, namespace, [{ name: 'c', command: COMMAND, image: IMAGE }]);
        const work =
          kind === 'work' ? { rootDir: join(logRoot, 'root'), containerLogsDir: join(logRoot, 'containers'), presentImages } : undefined;
        await runKubeletConfigPod(cri, { manifest, nodeName: NODE, podLogsDir: logRoot, imageRef: IMAGE, work });
      } else {
        const logDirectory = join(logRoot, `${namespace}_${name}_${uid}`);
        mkdirSync(logDirectory, { recursive: true }); // the kubelet makes the pod log dir too
        await runRawPod(cri, { uid, name, namespace, logDirectory, containers: [{ name: 'c', command: COMMAND, image: IMAGE }] });
      }
      const e = performance.now();
      fromBatch[i] = e - t0;
      service[i] = e - b;
      if (++done % Math.max(1, Math.round(n / 4)) === 0) log(`  raw C=${concurrency}: ${done}/${n}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  const wall = performance.now() - t0;
  const cpuUsed = cpu();
  const times = await criTimes(cri, namespace);
  const criStarted = Object.values(times).map((t) => t.containerStarted - t0Wall);
  return {
    path: `raw C=${concurrency}${RAW_KIND_SUFFIX[kind]}`,
    concurrency,
    pods: n,
    wallS: round(wall / 1000, 3),
    perPodP50Ms: ms(percentile(fromBatch, 50)),
    perPodP99Ms: ms(percentile(fromBatch, 99)),
    servicePodP50Ms: ms(percentile(service, 50)),
    servicePodP99Ms: ms(percentile(service, 99)),
    criStartedP50Ms: ms(percentile(criStarted, 50)),
    criStartedP99Ms: ms(percentile(criStarted, 99)),
    perPodMs: fromBatch.map(ms),
    cpu: cpuUsed,
  };
}

// ---------------------------------------------------------------- agent path

export interface AgentResult {
  path: 'agent';
  pods: number;
  quiet?: Quiet;
  /** spawn → all Running in /pods */
  wallS: number;
  /** /healthz answering → all Running */
  wallFromHealthzS: number;
  /** first config.seen → all Running */
  wallFromFirstSeenS: number;
  /** spawn → /healthz answering */
  healthzS: number;
  /** spawn → first config.seen */
  firstSeenS: number;
  /** spawn → first sandbox created_at (CRI): the first RunPodSandbox got going */
  firstSandboxS: number;
  /** spawn → last container started_at (CRI): the runtime work is done */
  lastStartedS: number;
  /** last container started_at → all Running observed in /pods (status/PLEG lag + poll interval) */
  statusLagS: number;
  /** each pod's container started_at → first /pods poll showing it Running (includes up to one poll interval) */
  podStatusLagMs: { p50: number; p99: number; max: number };
  /** pods whose /pods status showed a container restart count above 0 at any poll (none should) */
  restartedPods: number;
  pollIntervalMs: number;
  perPodP50Ms: number;
  perPodP99Ms: number;
  /** config.seen → container started_at of every pod, ms (for the CDF chart) */
  perPodMs: number[];
  /** config.seen → sandbox created_at (queueing, admission, image check, RunPodSandbox) */
  seenToSandboxP50Ms: number;
  seenToSandboxP99Ms: number;
  /** sandbox created_at → container started_at */
  sandboxToStartedP50Ms: number;
  sandboxToStartedP99Ms: number;
  podWorkerDuration: Record<string, HistSummary>;
  runtimeOps: Record<string, HistSummary>;
  runtimeOpsTotal: Record<string, number>;
  pleg: Record<string, Record<string, HistSummary>>;
  /** spawn → all Running; agentS counts from /healthz (its pid is known then), agentFromSpawnS and agentMainFromSpawnS from spawn */
  cpu: CpuWindow;
  logFile: string;
  notes: string[];
}

/**
 * One /pods poll: the number of the batch's pods Running with every container running (negated unless all n are),
 * noting when each was first seen so (`firstRunning`, wall ms) and which showed a container restart (`restarted`:
 * none of these containers exits, so a restart count above 0 is a status that went wrong).
 */
const observeRunning = (
  pods: Pod[],
  n: number,
  namespace: string,
  seenAt: number,
  firstRunning: Map<string, number>,
  restarted: Set<string>,
): number => {
  let running = 0;
  for (const p of pods) {
    if (p.metadata.namespace !== namespace) continue;
    const st = p.status;
    const cs = st?.containerStatuses ?? [];
    const name = p.metadata.name ?? '';
    if (cs.some((c) => c.restartCount > 0)) restarted.add(name);
    if (st?.phase === 'Running' && cs.length > 0 && cs.every((c) => c.state?.running !== undefined)) {
      running++;
      if (!firstRunning.has(name)) firstRunning.set(name, seenAt);
    }
  }
  return running === n ? running : -running;
};

async function agentRun(cri: CriClient, endpoint: string, n: number, namespace: string, pollIntervalMs: number): Promise<AgentResult> {
  const agent = new AgentProcess(endpoint, NODE, namespace, [`--max-pods=${n + 100}`, ...AGENT_ARGS]);
  agent.nodeFlags = AGENT_NODE_FLAGS;
  if (AGENT_BIN) agent.bin = resolve(AGENT_BIN);
  const notes: string[] = [];
  const logFile = join(tmpdir(), `kts-startup-agent-${namespace}.log`);
  try {
    for (let i = 0; i < n; i++)
      agent.writeManifest(`p-${i}`, podManifest(`p-${i}`, namespace, [{ name: 'c', command: COMMAND, image: IMAGE }]));
    const cpuNoAgent = cpuStart();
    const spawnWall = Date.now();
    const t0 = performance.now();
    await agent.start();
    const tHealthz = performance.now();
    const cpuAgent = cpuStart(agent.pid);
    log(`  agent: /healthz after ${ms(tHealthz - t0)} ms`);
    const deadline = t0 + TIMEOUT_MS;
    let tAll = 0;
    let lastReport = 0;
    let pods: Pod[] = [];
    const firstRunning = new Map<string, number>();
    const restarted = new Set<string>();
    for (;;) {
      pods = await agent.pods().catch(() => []);
      const now = performance.now();
      const r = observeRunning(pods, n, namespace, spawnWall + (now - t0), firstRunning, restarted);
      if (r === n) {
        tAll = now;
        break;
      }
      if (now - lastReport > 5000) {
        lastReport = now;
        log(`  agent: ${-r}/${n} Running (${pods.length} pods known) at ${ms((now - t0) / 1000)} s`);
      }
      if (now > deadline) {
        console.error(`agent: timed out after ${TIMEOUT_MS} ms with ${-r}/${n} Running; agent log tail:\n${agent.tail(80)}`);
        throw new Error('agent did not bring every pod to Running before the deadline');
      }
      await sleep(pollIntervalMs);
    }
    const cpu = {
      ...cpuNoAgent(),
      agentS: cpuAgent().agentS,
      agentFromSpawnS: round(procCpuS(agent.pid), 2),
      agentMainFromSpawnS: round(threadCpuS(agent.pid), 2),
    };
    log(`  agent: all ${n} Running after ${ms((tAll - t0) / 1000)} s`);

    const metricsText = await (await fetch(agent.metricsUrl)).text();
    const samples = parseProm(metricsText);
    const times = await criTimes(cri, namespace);
    const seen = new Map<string, number>();
    for (const p of pods) {
      const s = p.metadata.annotations?.[CONFIG_SEEN];
      if (p.metadata.namespace === namespace && s) seen.set(p.metadata.name ?? '', Date.parse(s));
    }
    const perPod: number[] = [];
    const podStatusLag: number[] = [];
    const seenToSandbox: number[] = [];
    const sandboxToStarted: number[] = [];
    let lastStarted = 0;
    let firstSandbox = Infinity;
    for (const [pod, t] of Object.entries(times)) {
      lastStarted = Math.max(lastStarted, t.containerStarted);
      firstSandbox = Math.min(firstSandbox, t.sandboxCreated);
      sandboxToStarted.push(t.containerStarted - t.sandboxCreated);
      const running = firstRunning.get(pod);
      if (running !== undefined) podStatusLag.push(running - t.containerStarted);
      const s = seen.get(pod);
      if (s === undefined) continue;
      perPod.push(t.containerStarted - s);
      seenToSandbox.push(t.sandboxCreated - s);
    }
    if (perPod.length !== n) notes.push(`per-pod startup from ${perPod.length}/${n} pods (config.seen or CRI container missing)`);
    const firstSeen = Math.min(...seen.values());
    const allRunningWall = spawnWall + (tAll - t0);
    const podWorkerDuration = histograms(samples, 'kubelet_pod_worker_duration_seconds', 'operation_type');
    if (Object.keys(podWorkerDuration).length === 0 || Object.values(podWorkerDuration).every((h) => h.count === 0)) {
      notes.push('kubelet_pod_worker_duration_seconds absent from /metrics (or no observations)');
    }
    const pleg: Record<string, Record<string, HistSummary>> = {};
    for (const name of [
      'kubelet_pleg_relist_duration_seconds',
      'kubelet_pleg_relist_interval_seconds',
      'kubelet_pod_start_duration_seconds',
      'kubelet_pod_start_sli_duration_seconds',
    ]) {
      const h = histograms(samples, name, '__none__');
      if (Object.keys(h).length) pleg[name] = h;
    }
    return {
      path: 'agent',
      pods: n,
      wallS: round((tAll - t0) / 1000, 3),
      wallFromHealthzS: round((tAll - tHealthz) / 1000, 3),
      wallFromFirstSeenS: round((allRunningWall - firstSeen) / 1000, 3),
      healthzS: round((tHealthz - t0) / 1000, 3),
      firstSeenS: round((firstSeen - spawnWall) / 1000, 3),
      firstSandboxS: round((firstSandbox - spawnWall) / 1000, 3),
      lastStartedS: round((lastStarted - spawnWall) / 1000, 3),
      statusLagS: round((allRunningWall - lastStarted) / 1000, 3),
      podStatusLagMs: { p50: ms(percentile(podStatusLag, 50)), p99: ms(percentile(podStatusLag, 99)), max: ms(Math.max(...podStatusLag)) },
      restartedPods: restarted.size,
      pollIntervalMs,
      perPodP50Ms: ms(percentile(perPod, 50)),
      perPodP99Ms: ms(percentile(perPod, 99)),
      perPodMs: perPod.map(ms),
      seenToSandboxP50Ms: ms(percentile(seenToSandbox, 50)),
      seenToSandboxP99Ms: ms(percentile(seenToSandbox, 99)),
      sandboxToStartedP50Ms: ms(percentile(sandboxToStarted, 50)),
      sandboxToStartedP99Ms: ms(percentile(sandboxToStarted, 99)),
      podWorkerDuration,
      runtimeOps: histograms(samples, 'kubelet_runtime_operations_duration_seconds', 'operation_type', [
        'run_podsandbox',
        'create_container',
        'start_container',
        'image_status',
        'pull_image',
        'container_status',
        'podsandbox_status',
        'list_containers',
        'list_podsandbox',
      ]),
      runtimeOpsTotal: counters(samples, 'kubelet_runtime_operations_total', 'operation_type'),
      pleg,
      cpu,
      logFile,
      notes,
    };
  } finally {
    writeFileSync(logFile, `${agent.logs.join('\n')}\n`);
    await agent.cleanup().catch((err) => log(`  agent cleanup failed: ${String(err)}`));
  }
}

/** 2 raw pods and a 2-pod agent run, results discarded. */
async function warmUp(cri: CriClient, endpoint: string, logRoot: string, pollIntervalMs: number): Promise<void> {
  const rawNs = `su-warm-raw-${uniq()}`;
  try {
    await rawRun(cri, 2, 2, rawNs, logRoot);
  } finally {
    await removeNamespace(cri, rawNs);
  }
  await agentRun(cri, endpoint, 2, `su-warm-agent-${uniq()}`, pollIntervalMs);
  log('  warm-up done');
}

// ---------------------------------------------------------------- scenarios

export interface ScenarioResult {
  runtime: string;
  pods: number;
  endpoint: string;
  simLatency?: string;
  raw: RawResult[];
  agent: AgentResult;
  ratioVsRawC8: number;
  /** agent wall (from spawn) / raw C=8 made with the kubelet's own sandbox and container configs */
  ratioVsRawC8KubeletConfigs?: number;
  ratioVsRawC8KubeletWork?: number;
  ratioFromHealthzVsRawC8: number;
  ratioFromFirstSeenVsRawC8: number;
}

/** Waits for the previous phase's teardown (network namespaces, shims) to settle; logged and kept with the phase. */
async function quietMachine(): Promise<Quiet> {
  const q = await waitQuiet({ cpus: cpus().length });
  log(`  machine: ${Math.round(q.busy * 100)} % busy after waiting ${q.waitedS} s`);
  return q;
}

async function scenario(
  runtime: string,
  endpoint: string,
  n: number,
  concs: number[],
  pollIntervalMs: number,
  simLatency?: string,
): Promise<ScenarioResult> {
  log(`== ${runtime}: ${n} pods, endpoint ${endpoint}`);
  const cri = new CriClient({ runtimeEndpoint: endpoint, timeoutMs: 120_000 });
  const logRoot = mkdtempSync(join(tmpdir(), 'kts-startup-raw-logs-'));
  try {
    await warmUp(cri, endpoint, logRoot, pollIntervalMs);
    const raw: RawResult[] = [];
    const phases = [
      ...concs.map((c) => ({ c, kind: 'minimal' as const })),
      ...KUBELET_CONC.map((c) => ({ c, kind: 'kubelet' as const })),
      ...WORK_CONC.map((c) => ({ c, kind: 'work' as const })),
    ];
    for (const { c, kind } of phases) {
      const ns = `su-raw-${uniq()}`;
      const what = `raw C=${c}${RAW_KIND_SUFFIX[kind]}`;
      try {
        const quiet = await quietMachine();
        log(`  ${what}: ${n} pods`);
        const r = { ...(await rawRun(cri, n, c, ns, logRoot, kind)), quiet };
        log(`  ${what}: wall ${r.wallS} s, per-pod p50 ${r.perPodP50Ms} ms p99 ${r.perPodP99Ms} ms`);
        raw.push(r);
      } finally {
        const t = performance.now();
        const k = await removeNamespace(cri, ns);
        log(`  ${what}: removed ${k} sandboxes in ${ms((performance.now() - t) / 1000)} s`);
      }
    }
    (globalThis as { gc?: () => void }).gc?.();
    const quiet = await quietMachine();
    log(`  agent: ${n} pods`);
    const agent = { ...(await agentRun(cri, endpoint, n, `su-agent-${uniq()}`, pollIntervalMs)), quiet };
    log(
      `  agent: wall ${agent.wallS} s (from healthz ${agent.wallFromHealthzS} s), per-pod p50 ${agent.perPodP50Ms} ms p99 ${agent.perPodP99Ms} ms`,
    );
    const base = raw.find((r) => r.path === 'raw C=8') ?? raw[0];
    const kubeletBase = raw.find((r) => r.path === `raw C=8${RAW_KIND_SUFFIX.kubelet}`);
    const workBase = raw.find((r) => r.path === `raw C=8${RAW_KIND_SUFFIX.work}`);
    return {
      runtime,
      pods: n,
      endpoint,
      ...(simLatency ? { simLatency } : {}),
      raw,
      agent,
      ratioVsRawC8: round(agent.wallS / base.wallS, 2),
      ...(kubeletBase ? { ratioVsRawC8KubeletConfigs: round(agent.wallS / kubeletBase.wallS, 2) } : {}),
      ...(workBase ? { ratioVsRawC8KubeletWork: round(agent.wallS / workBase.wallS, 2) } : {}),
      ratioFromHealthzVsRawC8: round(agent.wallFromHealthzS / base.wallS, 2),
      ratioFromFirstSeenVsRawC8: round(agent.wallFromFirstSeenS / base.wallS, 2),
    };
  } finally {
    cri.close();
    rmSync(logRoot, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const results: ScenarioResult[] = [];
  const meta = {
    machine: machine(),
    command: `node --expose-gc --import tsx bench/startup.bench.ts ${process.argv.slice(2).join(' ')}`.trim(),
    agentArgs: AGENT_ARGS,
    ...(AGENT_BIN && { agentBin: resolve(AGENT_BIN) }),
  };
  if (SCENARIOS.includes('containerd')) {
    setRuntimePid(containerdPid());
    results.push(await scenario('containerd', CD_ENDPOINT, CD_PODS, CD_CONC, 100));
  }
  if (SCENARIOS.includes('sim')) {
    const dir = mkdtempSync(join(tmpdir(), 'kts-startup-sim-'));
    const sim = await startSimProcess(dir, SIM_LATENCY);
    setRuntimePid(sim.child.pid);
    try {
      results.push(await scenario('sim', sim.endpoint, SIM_PODS, SIM_CONC, 250, `default=${SIM_LATENCY}`));
    } finally {
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  writeResults(OUT, { ...meta, results }, markdown(results, meta));
  writeStartupCharts(results, OUT, meta.machine);
  const md = markdown(results, meta).split('\n');
  const first = md.findIndex((l) => l.startsWith('|'));
  const end = md.findIndex((l, i) => i > first && !l.startsWith('|'));
  console.log(md.slice(first, end).join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
