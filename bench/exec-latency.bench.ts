/**
 * `kubectl exec POD -- true` round trips through the real v1.20.2 apiserver
 * to a node on containerd: kubelet-ts and the Go kubelet v1.20.2, side by
 * side on the same control plane and containerd, their execs alternating (issue 30's line:
 * kubelet-ts ≤ 1.0 × the Go kubelet at p50 and p99).
 *
 *   npm run bench -- exec-latency [--runs 100] [--rounds 2] [--out NAME] [--cpu-prof DIR] [--report-only]
 *
 * Needs the control plane (scripts/control-plane.sh build && up) and root:
 * each agent is a node of its own with one busybox pod pinned to it, on a
 * private containerd (scripts/containerd.sh with its own dirs; two
 * instances of one build and configuration, swapped every round), since an
 * agent removes from its runtime the pods it does not know.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentProcess } from '../test/e2e/agent-harness.js';
import { createCgroupRoot, removeCgroupTree } from '../test/e2e/cgroup-root.js';
import {
  ADMIN_KUBECONFIG,
  condition,
  deleteNodeObjects,
  getOrUndefined,
  kubectl,
  kubectlApply,
  nodeKubeconfig,
} from '../test/e2e/cluster-env.js';
import { pollUntil } from '../test/helpers/poll.js';
import { PrivateContainerd } from '../test/helpers/private-containerd.js';
import { GoKubelet } from './lib/go-kubelet.js';
import { wsExec } from './lib/ws-exec.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';

const run = promisify(execFile);
const RUNS = Number(arg('runs', '100'));
const ROUNDS = Number(arg('rounds', '2'));
const OUT = arg('out', 'exec-latency');
const REPORT_ONLY = process.argv.includes('--report-only');
/** A directory for the kubelet-ts agent's V8 CPU profiles (node --cpu-prof), written when it exits. */
const CPU_PROF = arg('cpu-prof', '');
const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

interface Sample {
  agent: 'ts' | 'go';
  round: number;
  /** `kubectl exec POD -- true`, through the apiserver. */
  ms: number[];
  /** The same exec straight to the kubelet's port over WebSocket (bench/lib/ws-exec.ts). */
  directMs: number[];
}

async function startAgent(kind: 'ts' | 'go', nodeName: string, endpoint: string): Promise<{ port: number; stop(): Promise<void> }> {
  if (kind === 'ts') {
    const a = new AgentProcess(endpoint, nodeName, nodeName, ['--address=0.0.0.0']);
    if (CPU_PROF) a.nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`);
    a.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(nodeName, join(a.dir, 'kubeconfig'))}`);
    await a.start();
    return { port: a.port, stop: () => a.cleanup() };
  }
  // The pod's cgroups as kubelet-ts's (cgroupsPerQOS, the upstream default, under a root of its own): with
  // GoKubelet's usual cgroupsPerQOS false, the exec'd process would not sit under the BestEffort tier's
  // 2 CPU shares, and on a loaded machine it would get the CPU sooner than under kubelet-ts.
  const cgroupRoot = `/kts-bench-exec-${nodeName}`;
  createCgroupRoot(cgroupRoot);
  const g = new GoKubelet({
    endpoint,
    nodeName,
    namespace: nodeName,
    extraConfig: { address: '0.0.0.0', cgroupsPerQOS: true, cgroupRoot, enforceNodeAllocatable: ['pods'] },
  });
  await nodeKubeconfig(nodeName, join(g.dir, 'kubeconfig'));
  g.opts.extraArgs = [`--kubeconfig=${join(g.dir, 'kubeconfig')}`];
  await g.start();
  return {
    port: g.port,
    stop: async () => {
      await g.cleanup();
      removeCgroupTree(cgroupRoot);
    },
  };
}

/** One agent, registered and Ready, with its pod Ready. */
interface Node {
  kind: 'ts' | 'go';
  ns: string;
  /** The kubelet's port (HTTPS, authenticated). */
  port: number;
  stop(): Promise<void>;
}

async function startNode(kind: 'ts' | 'go', round: number, endpoint: string): Promise<Node> {
  // A fresh name per run: the namespace of a run just before may still be terminating.
  const nodeName = `bench-exec-${kind}-${round}-${randomUUID().slice(0, 4)}`;
  const ns = nodeName;
  await kubectl('create', 'namespace', ns);
  const agent = await startAgent(kind, nodeName, endpoint);
  const stop = async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent.stop();
    await deleteNodeObjects(nodeName);
  };
  try {
    await pollUntil('the node Ready', async () => condition(await getOrUndefined('node', nodeName), 'Ready')?.status === 'True', {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    await kubectlApply(ns, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'box' },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': nodeName },
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: IMAGE, command: ['sleep', '3600'] }],
      },
    });
    await kubectl('-n', ns, 'wait', '--for=condition=Ready', 'pod/box', '--timeout=120s');
    return { kind, ns, port: agent.port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function execOnce(node: Node): Promise<number> {
  const t0 = performance.now();
  await run('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, '-n', node.ns, 'exec', 'box', '--', 'true']);
  return performance.now() - t0;
}

/**
 * One round: both agents up at once (each its own node and pod), then the execs alternate between them,
 * ts first in even pairs and go first in odd ones, so that a change in the machine's load during the round
 * falls on both alike. Never two execs at once.
 */
async function measureRound(round: number, runtimes: readonly [PrivateContainerd, PrivateContainerd]): Promise<Sample[]> {
  const nodes: Node[] = [];
  try {
    // Each agent on a containerd of its own (an agent removes the pods it does not know from its runtime),
    // the two swapped every round.
    const [forTs, forGo] = round % 2 === 1 ? runtimes : [runtimes[1], runtimes[0]];
    nodes.push(await startNode('ts', round, forTs.endpoint), await startNode('go', round, forGo.endpoint));
    const ms = { ts: [] as number[], go: [] as number[] };
    const directMs = { ts: [] as number[], go: [] as number[] };
    for (let i = 0; i < RUNS + 3; i++) {
      for (const node of i % 2 === 0 ? nodes : [...nodes].reverse()) {
        const t = await execOnce(node);
        const d = await wsExec({ port: node.port, namespace: node.ns, pod: 'box', container: 'main', command: ['true'] });
        if (i >= 3) {
          // the first three warm the connections up
          ms[node.kind].push(t);
          directMs[node.kind].push(d);
        }
      }
    }
    return [
      { agent: 'ts', round, ms: ms.ts, directMs: directMs.ts },
      { agent: 'go', round, ms: ms.go, directMs: directMs.go },
    ];
  } finally {
    for (const n of nodes) await n.stop();
  }
}

/** The result page: a row per round, and every round's execs pooled. */
function report(samples: Sample[], m: ReturnType<typeof machine>, runs: number, rounds: number): string {
  const stat = (ms: number[]) => ({
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    mean: ms.reduce((x, y) => x + y, 0) / ms.length,
  });
  type Stat = ReturnType<typeof stat>;
  const row = (label: string, ts: Stat, go: Stat) =>
    `| ${label} | ${round(ts.p50, 1)} / ${round(go.p50, 1)} = **${round(ts.p50 / go.p50)}** | ${round(ts.p99, 1)} / ${round(go.p99, 1)} = **${round(ts.p99 / go.p99)}** | ${round(ts.mean, 1)} / ${round(go.mean, 1)} |`;
  const table = (pick: (s: Sample) => number[]): string[] => {
    const rows = ['| round | p50 ts / go | p99 ts / go | mean ts / go |', '|---|---|---|---|'];
    for (let r = 1; r <= rounds; r++) {
      const ts = stat(pick(samples.find((s) => s.agent === 'ts' && s.round === r)!));
      const go = stat(pick(samples.find((s) => s.agent === 'go' && s.round === r)!));
      rows.push(row(String(r), ts, go));
    }
    const all = (agent: Sample['agent']) => stat(samples.filter((s) => s.agent === agent).flatMap(pick));
    const ts = all('ts');
    const go = all('go');
    rows.push(row(`all ${rounds} pooled`, ts, go));
    return rows;
  };
  return [
    '# kubectl exec round trip: kubelet-ts / Go kubelet v1.20.2',
    '',
    `\`npm run bench -- exec-latency --runs ${runs} --rounds ${rounds}\`; ${String(m.date)}, load ${String(m.loadavg)}.`,
    `\`kubectl exec POD -- true\` ${runs} times per agent and round (after 3 warm-up runs), through the v1.20.2 apiserver,`,
    'each agent the node of its own pod, both with cgroupsPerQOS (each under its own cgroupRoot), each on a containerd of its own',
    '(two instances of the same build and configuration, swapped every round: an agent removes pods it does not know).',
    'Both agents run through a round and the execs alternate between them (ts, go, go, ts, …), never two at once. Times in ms.',
    '',
    ...table((s) => s.ms),
    '',
    "## The kubelet's part: the same exec straight to its port",
    '',
    "After each kubectl exec, one exec of `true` sent straight to the kubelet's port as the apiserver sends it (TLS with the",
    "apiserver's kubelet client certificate, WebSocket `v4.channel.k8s.io`, bench/lib/ws-exec.ts): connect to the runtime's close.",
    '',
    ...table((s) => s.directMs),
  ].join('\n');
}

async function main(): Promise<void> {
  const samples: Sample[] = [];
  // Two containerds, the same build and configuration (scripts/containerd.sh), each with its own state and pod network.
  const runtimes = [new PrivateContainerd('exlat1', 191), new PrivateContainerd('exlat2', 192)] as const;
  try {
    await Promise.all(runtimes.map((c) => c.up()));
    for (let r = 1; r <= ROUNDS; r++) {
      console.log(`round ${r}`);
      samples.push(...(await measureRound(r, runtimes)));
    }
  } finally {
    await Promise.all(runtimes.map((c) => c.down()));
  }
  const m = machine();
  const md = report(samples, m, RUNS, ROUNDS);
  writeResults(OUT, { machine: m, runs: RUNS, rounds: ROUNDS, samples }, md);
  console.log(md);
}

if (REPORT_ONLY) {
  // Rewrites the page from the result file of the last run (e.g. after the page's layout changed).
  const file = join(import.meta.dirname, 'results', `${OUT}.json`);
  const saved = JSON.parse(readFileSync(file, 'utf8')) as {
    machine: ReturnType<typeof machine>;
    runs: number;
    rounds: number;
    samples: Sample[];
  };
  writeResults(OUT, saved, report(saved.samples, saved.machine, saved.runs, saved.rounds));
} else {
  await main();
}
