/**
 * `kubectl exec POD -- true` round trips through the real v1.20.2 apiserver
 * to a node on containerd: kubelet-ts and the Go kubelet v1.20.2, one after
 * the other on the same control plane and containerd (issue 30's line:
 * kubelet-ts ≤ 1.0 × the Go kubelet at p50 and p99).
 *
 *   npm run bench -- exec-latency [--runs 100] [--rounds 2] [--out NAME]
 *
 * Needs containerd (scripts/containerd.sh up) and the control plane
 * (scripts/control-plane.sh build && up); each agent is a node of its own
 * and runs one busybox pod pinned to it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentProcess } from '../test/e2e/agent-harness.js';
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
import { GoKubelet } from './lib/go-kubelet.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';

const run = promisify(execFile);
const RUNS = Number(arg('runs', '100'));
const ROUNDS = Number(arg('rounds', '2'));
const OUT = arg('out', 'exec-latency');
const endpoint = process.env.KTS_CRI_ENDPOINT ?? 'unix:///run/kubelet-ts-containerd/containerd.sock';
const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

interface Sample {
  agent: 'ts' | 'go';
  round: number;
  ms: number[];
}

async function startAgent(kind: 'ts' | 'go', nodeName: string): Promise<{ stop(): Promise<void> }> {
  if (kind === 'ts') {
    const a = new AgentProcess(endpoint, nodeName, nodeName, ['--address=0.0.0.0']);
    a.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(nodeName, join(a.dir, 'kubeconfig'))}`);
    await a.start();
    return { stop: () => a.cleanup() };
  }
  const g = new GoKubelet({ endpoint, nodeName, namespace: nodeName, extraConfig: { address: '0.0.0.0' } });
  await nodeKubeconfig(nodeName, join(g.dir, 'kubeconfig'));
  g.opts.extraArgs = [`--kubeconfig=${join(g.dir, 'kubeconfig')}`];
  await g.start();
  return { stop: () => g.cleanup() };
}

async function measure(kind: 'ts' | 'go', round: number): Promise<Sample> {
  const nodeName = `bench-exec-${kind}-${round}`;
  const ns = nodeName;
  await kubectl('create', 'namespace', ns);
  const agent = await startAgent(kind, nodeName);
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
    const ms: number[] = [];
    for (let i = 0; i < RUNS + 3; i++) {
      const t0 = performance.now();
      await run('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, '-n', ns, 'exec', 'box', '--', 'true']);
      if (i >= 3) ms.push(performance.now() - t0); // the first three warm the connections up
    }
    return { agent: kind, round, ms };
  } finally {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent.stop();
    await deleteNodeObjects(nodeName);
  }
}

async function main(): Promise<void> {
  const samples: Sample[] = [];
  for (let r = 1; r <= ROUNDS; r++) {
    // Both orders: ts first in odd rounds, go first in even ones.
    for (const kind of r % 2 === 1 ? (['ts', 'go'] as const) : (['go', 'ts'] as const)) {
      console.log(`round ${r}: ${kind}`);
      samples.push(await measure(kind, r));
    }
  }
  const stat = (s: Sample) => ({
    p50: percentile(s.ms, 50),
    p99: percentile(s.ms, 99),
    mean: s.ms.reduce((a, b) => a + b, 0) / s.ms.length,
  });
  const rows: string[] = [];
  for (let r = 1; r <= ROUNDS; r++) {
    const ts = stat(samples.find((s) => s.agent === 'ts' && s.round === r)!);
    const go = stat(samples.find((s) => s.agent === 'go' && s.round === r)!);
    rows.push(
      `| ${r} | ${round(ts.p50, 1)} / ${round(go.p50, 1)} = **${round(ts.p50 / go.p50)}** | ${round(ts.p99, 1)} / ${round(go.p99, 1)} = **${round(ts.p99 / go.p99)}** | ${round(ts.mean, 1)} / ${round(go.mean, 1)} |`,
    );
  }
  const m = machine();
  const md = [
    '# kubectl exec round trip: kubelet-ts / Go kubelet v1.20.2',
    '',
    `\`npm run bench -- exec-latency --runs ${RUNS} --rounds ${ROUNDS}\`; ${String(m.date)}, load ${String(m.loadavg)}.`,
    `\`kubectl exec POD -- true\` ${RUNS} times per agent and round (after 3 warm-up runs), through the v1.20.2 apiserver,`,
    'each agent the node of its own pod on the same containerd; ts first in odd rounds, go first in even ones. Times in ms.',
    '',
    '| round | p50 ts / go | p99 ts / go | mean ts / go |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
  writeResults(OUT, { machine: m, runs: RUNS, rounds: ROUNDS, samples }, md);
  console.log(md);
}

await main();
