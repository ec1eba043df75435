/**
 * Runs upstream's [NodeConformance] e2e tests against one node agent, the
 * only node of the project's cluster. Started by scripts/conformance.sh,
 * which builds what is missing and sets the environment (KTS_CRI_ENDPOINT,
 * KTS_KUBECONFIG, KTS_E2E_BIN, KUBE_TEST_REPO_LIST).
 *
 *   --agent ts|go   kubelet-ts (default) or the Go kubelet v1.20.2 of the same build
 *   --subset ci     only the CI subset (conformance-subset.ts)
 *   --focus RE      only the [NodeConformance] tests this ginkgo regex also matches
 *   --skip RE       more skips, on top of SKIPS
 *   --nodes N       ginkgo parallel nodes (default 4)
 *   --out DIR       results directory (default .run/conformance/<agent>)
 *
 * Writes DIR/junit_*.xml, DIR/e2e.log, DIR/agent.log, DIR/summary.{json,md};
 * exits 0 when no test failed. The pods the run made are removed from the
 * runtime and the node from the cluster afterwards, also on failure.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { GoKubelet } from '../../bench/lib/go-kubelet.js';
import { CriClient } from '../../src/cri/client.js';
import { AgentProcess } from '../e2e/agent-harness.js';
import { condition, deleteNodeObjects, getOrUndefined, kubectlJson, nodeKubeconfig, type NodeObject } from '../e2e/cluster-env.js';
import { pollUntil } from '../helpers/poll.js';
import { CI_SUBSET, FOCUS, SKIPS, skipRegex } from './conformance-subset.js';
import { counts, readJunitDir, summaryMarkdown, type TestResult } from './junit.js';

const { values: args } = parseArgs({
  options: {
    agent: { type: 'string', default: 'ts' },
    subset: { type: 'string' },
    focus: { type: 'string' },
    skip: { type: 'string' },
    nodes: { type: 'string', default: '4' },
    out: { type: 'string' },
  },
});
const agentKind = args.agent;
if (agentKind !== 'ts' && agentKind !== 'go') throw new Error(`--agent must be ts or go, not ${agentKind}`);
if (args.subset !== undefined && args.subset !== 'ci') throw new Error(`--subset must be ci, not ${args.subset}`);
const endpoint = need('KTS_CRI_ENDPOINT');
const admin = need('KTS_KUBECONFIG');
const bin = need('KTS_E2E_BIN');
need('KUBE_TEST_REPO_LIST');
const out = resolve(args.out ?? join('.run', 'conformance', agentKind));
const nodeName = `conformance-${agentKind}`;

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through scripts/conformance.sh`);
  return v;
}

/**
 * The ginkgo focus: [NodeConformance], or the subset's or --focus's
 * patterns (Go's regexp has no lookahead to AND them; the results are
 * filtered by both, see focusResults).
 */
function focus(): string {
  if (args.subset === 'ci') return `(${CI_SUBSET.map((t) => t.pattern).join('|')})`;
  return args.focus ? `(${args.focus})` : FOCUS;
}

/** Stale nodes (not Ready) go; another Ready node makes the run refuse: the suite's pods would land there too. */
async function clearCluster(): Promise<void> {
  const nodes = (await kubectlJson<{ items: NodeObject[] }>('get', 'nodes')).items;
  for (const n of nodes) {
    if (n.metadata.name === nodeName) continue;
    if (condition(n, 'Ready')?.status === 'True') {
      throw new Error(`node ${n.metadata.name} is Ready in the cluster: the suite needs its node alone; stop that node's agent first`);
    }
    console.log(`removing the stale node ${n.metadata.name}`);
    await deleteNodeObjects(n.metadata.name);
  }
  await deleteNodeObjects(nodeName);
}

interface RunningAgent {
  logs: string[];
  stop(): Promise<void>;
  /** After the run's pods are removed: what the agent leaves beside them (kubelet-ts: its own cgroupRoot). */
  afterPodsRemoved?(): void;
}

async function startAgent(): Promise<RunningAgent> {
  if (agentKind === 'ts') {
    // Both agents listen on every address (upstream's default), so the apiserver reaches them at the node's IP.
    const a = new AgentProcess(endpoint, nodeName, '', ['--v=2', '--address=0.0.0.0']);
    a.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(nodeName, join(a.dir, 'kubeconfig'))}`);
    await a.start();
    return {
      logs: a.logs,
      stop: async () => {
        await a.stop();
        for (const m of a.mounts()) execFileSync('umount', ['-l', m]);
        rmSync(a.dir, { recursive: true, force: true });
      },
      afterPodsRemoved: () => a.removeOwnCgroupRoot(),
    };
  }
  const kubeconfig = join(out, 'go-node.kubeconfig');
  await nodeKubeconfig(nodeName, kubeconfig);
  const g = new GoKubelet({
    endpoint,
    nodeName,
    namespace: '',
    verbosity: 2,
    extraArgs: [`--kubeconfig=${kubeconfig}`],
    extraConfig: { address: '0.0.0.0' },
    startTimeoutMs: 120_000,
  });
  await g.start();
  return { logs: g.logs, stop: () => g.cleanup() };
}

/** Sandboxes the runtime has now; those made during the run are removed after it. */
async function sandboxIds(cri: CriClient): Promise<Set<string>> {
  return new Set((await cri.listPodSandbox({})).items.map((s) => s.id));
}

async function removeNewSandboxes(cri: CriClient, before: Set<string>): Promise<void> {
  for (const s of (await cri.listPodSandbox({})).items) {
    if (before.has(s.id)) continue;
    await cri.stopPodSandbox({ podSandboxId: s.id }).catch(() => undefined);
    await cri.removePodSandbox({ podSandboxId: s.id }).catch(() => undefined);
  }
}

function runGinkgo(): Promise<number> {
  const skip = [skipRegex(), args.skip].filter(Boolean).join('|');
  const argv = [
    `-nodes=${args.nodes}`,
    '-noColor',
    join(bin, 'e2e.test'),
    '--',
    '--provider=skeleton',
    `--kubeconfig=${admin}`,
    `--ginkgo.focus=${focus()}`,
    `--ginkgo.skip=${skip}`,
    '--num-nodes=1',
    '--minStartupPods=0',
    '--allowed-not-ready-nodes=0',
    `--report-dir=${out}`,
    '--ginkgo.noColor',
  ];
  const log = createWriteStream(join(out, 'e2e.log'));
  log.write(`${join(bin, 'ginkgo')} ${argv.join(' ')}\n`);
  const child = spawn(join(bin, 'ginkgo'), argv, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  for (const s of [child.stdout, child.stderr]) {
    s.pipe(log, { end: false });
    s.on('data', (b: Buffer) => {
      for (const line of b.toString().split('\n')) if (/^(•|\[Fail\]|Ran \d+|SUCCESS|FAIL)/.test(line)) console.log(line);
    });
  }
  return new Promise((res) => child.on('exit', (code) => (log.end(), res(code ?? 1))));
}

/** The results of the focus only (the JUnit files list every spec of the binary), with each skip's reason. */
function focusResults(): TestResult[] {
  const inFocus = new RegExp(focus());
  const conformance = new RegExp(FOCUS);
  return readJunitDir(out)
    .filter((r) => conformance.test(r.name) && inFocus.test(r.name))
    .map((r) => {
      if (r.outcome !== 'skipped') return r;
      const why = SKIPS.find((s) => new RegExp(s.pattern).test(r.name));
      return { ...r, reason: why?.reason ?? 'skipped by the suite itself (see e2e.log)' };
    });
}

async function main(): Promise<number> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const cri = new CriClient({ runtimeEndpoint: endpoint, timeoutMs: 60_000 });
  const t0 = Date.now();
  let agent: RunningAgent | undefined;
  const before = await sandboxIds(cri);
  try {
    await clearCluster();
    agent = await startAgent();
    await pollUntil('the node to be Ready', async () => condition(await getOrUndefined('node', nodeName), 'Ready')?.status === 'True', {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    console.log(`node ${nodeName} (${agentKind}) Ready; running the suite (${args.nodes} ginkgo nodes, results in ${out})`);
    const code = await runGinkgo();
    const results = focusResults();
    const c = counts(results);
    const minutes = (Date.now() - t0) / 60_000;
    const extra = [
      `Agent: ${agentKind === 'ts' ? 'kubelet-ts' : 'the Go kubelet v1.20.2'}, node ${nodeName}, containerd ${endpoint}.`,
      `Focus: \`${focus()}\`; ${args.nodes} ginkgo nodes; ${minutes.toFixed(1)} min end to end; ginkgo exit ${code}.`,
    ];
    writeFileSync(
      join(out, 'summary.json'),
      `${JSON.stringify({ agent: agentKind, minutes, ginkgoExit: code, counts: c, results }, null, 2)}\n`,
    );
    writeFileSync(join(out, 'summary.md'), summaryMarkdown(`[NodeConformance] on ${agentKind}`, results, extra));
    console.log(`${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped in ${minutes.toFixed(1)} min; ${join(out, 'summary.md')}`);
    return c.failed === 0 && c.passed > 0 ? 0 : 1;
  } finally {
    if (agent) {
      writeFileSync(join(out, 'agent.log'), `${agent.logs.join('\n')}\n`);
      await agent.stop().catch((err: unknown) => console.error(`stopping the agent: ${String(err)}`));
    }
    await removeNewSandboxes(cri, before).catch((err: unknown) => console.error(`removing the run's pods: ${String(err)}`));
    try {
      agent?.afterPodsRemoved?.();
    } catch (err) {
      console.error(`removing the agent's cgroupRoot: ${String(err)}`);
    }
    cri.close();
    await deleteNodeObjects(nodeName);
  }
}

process.exitCode = await main();
