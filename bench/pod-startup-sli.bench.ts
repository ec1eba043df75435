/**
 * Pod start-up SLI through the apiserver: one Deployment of N pods (default
 * 100) scheduled by the real scheduler onto one node at a time — kubelet-ts,
 * then the Go kubelet v1.20.2 from the same build (or the other order with
 * `--order go-first`) — on the same control plane and the same kind of private
 * containerd, in one run.
 *
 * Per agent: the time from the Deployment's creation to all N pods Ready, and
 * p50/p99 of each pod's (Ready lastTransitionTime − creationTimestamp), from
 * the statuses the kubelet reported (second resolution, as the API stores them).
 *
 * `npm run bench -- pod-startup-sli [--pods 100] [--order ts-first|go-first]
 * [--automount true|false] [--qps 50] [--burst 100]`. automount defaults to
 * false: no service-account token volume, so both kubelets do the same work
 * even where volumes differ. --qps and --burst are given to both kubelets
 * (kubeAPIQPS / kubeAPIBurst): v1.20.2 defaults to 5 / 10 and kubelet-ts to
 * newer upstream's 50 / 100, so without them the Go kubelet's status writes
 * queue behind its client's rate limiter. Writes
 * bench/results/pod-startup-sli-<pods>-<order>.{json,md}. For profiling,
 * `--only kubelet-ts|go-kubelet` runs one agent and writes nothing, and
 * `--ts-node-flags "--cpu-prof --cpu-prof-dir=DIR"` passes Node flags to kubelet-ts.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { realClock } from '../src/common/clock.js';
import { TokenBucket } from '../src/common/token-bucket.js';
import { RestClient } from '../src/main/apiserver/rest-client.js';
import { loadKubeConfig } from '../src/main/apiserver/tls-bootstrap.js';
import { AgentProcess } from '../test/e2e/agent-harness.js';
import { pollUntil } from '../test/helpers/poll.js';
import { PrivateContainerd } from '../test/helpers/private-containerd.js';
import { writeStartupCdf } from './lib/charts.js';
import { cpuStart, type CpuWindow } from './lib/cpu.js';
import { GoKubelet } from './lib/go-kubelet.js';
import { arg, machine, percentile, round, RESULTS_DIR, writeResults } from './lib/report.js';

const run = promisify(execFile);
const CP = join(RESULTS_DIR, '../../scripts/control-plane.sh');

interface PodView {
  metadata: { name: string; creationTimestamp: string };
  status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] };
}

async function kubectl(admin: string, ...args: string[]): Promise<string> {
  return (await run('kubectl', ['--kubeconfig', admin, ...args], { maxBuffer: 256 * 1024 * 1024 })).stdout;
}

async function kubectlStdin(admin: string, doc: object, ...args: string[]): Promise<void> {
  const child = execFile('kubectl', ['--kubeconfig', admin, ...args, '-f', '-']);
  const done = new Promise<void>((res, rej) =>
    child.on('exit', (c) => (c === 0 ? res() : rej(new Error(`kubectl ${args.join(' ')} exited ${c}`)))),
  );
  child.stdin!.end(JSON.stringify(doc));
  await done;
}

interface AgentRun {
  agent: 'kubelet-ts' | 'go-kubelet';
  pods: number;
  allReadyMs: number;
  perPodMs: number[];
  p50Ms: number;
  p99Ms: number;
  /** Ready − PodScheduled per pod: the kubelet's share (the rest is the controllers' and the scheduler's). */
  kubeletP50Ms: number;
  kubeletP99Ms: number;
  /** CPU from the Deployment's creation to all Ready: the machine's, the kubelet process's, and the top commands'. */
  cpu: CpuWindow;
}

/** The bench's own apiserver client: polls in-process, so the observer adds no kubectl process per poll. */
function adminClient(admin: string): RestClient {
  return new RestClient({
    kubeConfig: loadKubeConfig(admin, 'the admin kubeconfig'),
    clock: realClock,
    limiter: new TokenBucket(0, 0, realClock),
    timeoutMs: 30_000,
    userAgent: 'pod-startup-sli-bench',
  });
}

async function listPods(api: RestClient, ns: string): Promise<PodView[]> {
  return (await api.get<{ items: PodView[] }>(`/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: 'app=sli' } })).items;
}

async function measure(
  admin: string,
  api: RestClient,
  ns: string,
  node: string,
  pods: number,
  automount: boolean,
  agent: AgentRun['agent'],
  agentPid: number | undefined,
): Promise<AgentRun> {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'sli', namespace: ns },
    spec: {
      replicas: pods,
      selector: { matchLabels: { app: 'sli' } },
      template: {
        metadata: { labels: { app: 'sli' } },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node },
          automountServiceAccountToken: automount,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'c', image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sleep', '3600'] }],
        },
      },
    },
  };
  const cpuWindow = cpuStart(agentPid);
  const t0 = Date.now();
  await kubectlStdin(admin, deployment, 'apply');
  const items = await pollUntil(
    `${pods} pods Ready on ${node}`,
    async () => {
      const ready = (await listPods(api, ns)).filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length >= pods ? ready : undefined;
    },
    { timeoutMs: 15 * 60_000, intervalMs: 500 },
  );
  const allReadyMs = Date.now() - t0;
  const cpu = cpuWindow();
  const at = (p: PodView, type: string) => Date.parse(p.status!.conditions!.find((c) => c.type === type)?.lastTransitionTime ?? '');
  const perPodMs = items.map((p) => at(p, 'Ready') - Date.parse(p.metadata.creationTimestamp));
  const kubeletMs = items.map((p) => at(p, 'Ready') - at(p, 'PodScheduled')).filter((x) => Number.isFinite(x));
  await kubectl(admin, '-n', ns, 'delete', 'deployment', 'sli', '--wait=false');
  await pollUntil('the pods to be gone', async () => (await listPods(api, ns)).length === 0, { timeoutMs: 15 * 60_000, intervalMs: 1000 });
  return {
    agent,
    pods,
    allReadyMs,
    perPodMs,
    p50Ms: percentile(perPodMs, 50),
    p99Ms: percentile(perPodMs, 99),
    kubeletP50Ms: percentile(kubeletMs, 50),
    kubeletP99Ms: percentile(kubeletMs, 99),
    cpu,
  };
}

async function main(): Promise<void> {
  const pods = Number(arg('pods', '100'));
  const order = arg('order', 'ts-first');
  const automount = arg('automount', 'false') === 'true';
  const qps = Number(arg('qps', '50'));
  const burst = Number(arg('burst', '100'));
  const clientArgs = [`--kube-api-qps=${qps}`, `--kube-api-burst=${burst}`];
  const only = arg('only', '');
  const tsNodeFlags = arg('ts-node-flags', '').split(' ').filter(Boolean);
  const env = Object.fromEntries(
    (await run('bash', [CP, 'env'])).stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
  const admin = env.KTS_KUBECONFIG;
  const api = adminClient(admin);
  const id = randomUUID().slice(0, 5);
  const runs: AgentRun[] = [];
  const agents = (order === 'go-first' ? ['go-kubelet', 'kubelet-ts'] : ['kubelet-ts', 'go-kubelet']).filter(
    (a) => !only || a === only,
  ) as AgentRun['agent'][];
  if (agents.length === 0) throw new Error(`--only ${only}: expected kubelet-ts or go-kubelet`);
  try {
    for (const which of agents) {
      const node = `sli-${which === 'kubelet-ts' ? 'ts' : 'go'}-${id}`;
      const ns = node;
      await kubectl(admin, 'create', 'namespace', ns);
      await pollUntil(
        'the default service account',
        async () => (await kubectl(admin, '-n', ns, 'get', 'sa', 'default').catch(() => '')) !== '',
        {
          timeoutMs: 60_000,
          intervalMs: 500,
        },
      );
      const cd = new PrivateContainerd(`s${which === 'kubelet-ts' ? 't' : 'g'}${id.slice(0, 4)}`, which === 'kubelet-ts' ? 142 : 143);
      await cd.up();
      const kubeconfig = `/tmp/${node}.kubeconfig`;
      await run('bash', [CP, 'kubeconfig', node, kubeconfig]);
      let stop: () => Promise<void>;
      let pid: () => number | undefined;
      if (which === 'kubelet-ts') {
        const a = new AgentProcess(cd.endpoint, node, ns, [
          `--kubeconfig=${kubeconfig}`,
          `--max-pods=${Math.max(110, pods + 10)}`,
          ...clientArgs,
        ]);
        a.nodeFlags = tsNodeFlags;
        await a.start();
        stop = () => a.cleanup();
        pid = () => a.pid;
      } else {
        const g = new GoKubelet({
          endpoint: cd.endpoint,
          nodeName: node,
          namespace: ns,
          maxPods: Math.max(110, pods + 10),
          extraArgs: [`--kubeconfig=${kubeconfig}`, ...clientArgs],
        });
        await g.start();
        stop = () => g.cleanup();
        pid = () => g.pid;
      }
      try {
        await pollUntil(
          `${node} Ready`,
          async () =>
            (await kubectl(admin, 'get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}').catch(
              () => '',
            )) === 'True',
          {
            timeoutMs: 120_000,
            intervalMs: 500,
          },
        );
        const r = await measure(admin, api, ns, node, pods, automount, which, pid());
        console.log(`${which}: all ${pods} Ready after ${r.allReadyMs} ms; per pod p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`);
        runs.push(r);
      } finally {
        await stop().catch(() => undefined);
        await cd.down().catch(() => undefined);
        await kubectl(admin, 'delete', 'node', node, '--ignore-not-found', '--wait=false').catch(() => undefined);
        await kubectl(admin, 'delete', 'namespace', ns, '--wait=false').catch(() => undefined);
      }
    }
  } finally {
    // Nodes and namespaces are deleted per agent above.
  }
  if (only) return;
  const ts = runs.find((r) => r.agent === 'kubelet-ts')!;
  const go = runs.find((r) => r.agent === 'go-kubelet')!;
  const result = { machine: machine(), pods, order, automountServiceAccountToken: automount, qps, burst, runs };
  const name = `pod-startup-sli-${pods}-${order}`;
  const cores = cpus().length;
  /** The window's length if the kubelet took no CPU and the rest of the run's work stayed: (busy − kubelet) / cores. */
  // An unknown kubelet CPU gives NaN, not busy / cores (which would overstate the floor).
  const floorMs = (r: AgentRun) => ((r.cpu.machineBusyS - (r.cpu.agentS ?? Number.NaN)) / cores) * 1000;
  const chart = writeStartupCdf(
    `${name}-cdf.svg`,
    `Pod start-up through the apiserver, ${pods} pods of one Deployment`,
    `Ready − creationTimestamp per pod; ${order}; same control plane and containerd build`,
    runs.map((r) => ({ name: r.agent, values: r.perPodMs })),
  );
  const md = [
    `# Pod start-up SLI: ${pods} pods of one Deployment (${order})`,
    '',
    `Measured ${result.machine.date as string}; \`npm run bench -- pod-startup-sli --pods ${pods} --order ${order} --qps ${qps} --burst ${burst}\`; automountServiceAccountToken: ${automount}; both kubelets run with kubeAPIQPS ${qps} and kubeAPIBurst ${burst}.`,
    '',
    '| figure | kubelet-ts | Go kubelet 1.20.2 | ratio |',
    '|---|---:|---:|---:|',
    `| creation → all Ready (s) | ${round(ts.allReadyMs / 1000, 1)} | ${round(go.allReadyMs / 1000, 1)} | ${round(ts.allReadyMs / go.allReadyMs, 2)} |`,
    `| per pod p50 (s) | ${round(ts.p50Ms / 1000, 1)} | ${round(go.p50Ms / 1000, 1)} | ${round(ts.p50Ms / Math.max(go.p50Ms, 1), 2)} |`,
    `| per pod p99 (s) | ${round(ts.p99Ms / 1000, 1)} | ${round(go.p99Ms / 1000, 1)} | ${round(ts.p99Ms / Math.max(go.p99Ms, 1), 2)} |`,
    `| per pod, scheduled → Ready, p50 (s) | ${round(ts.kubeletP50Ms / 1000, 1)} | ${round(go.kubeletP50Ms / 1000, 1)} | ${round(ts.kubeletP50Ms / Math.max(go.kubeletP50Ms, 1), 2)} |`,
    `| per pod, scheduled → Ready, p99 (s) | ${round(ts.kubeletP99Ms / 1000, 1)} | ${round(go.kubeletP99Ms / 1000, 1)} | ${round(ts.kubeletP99Ms / Math.max(go.kubeletP99Ms, 1), 2)} |`,
    `| machine busy, creation → all Ready (CPU-s) | ${ts.cpu.machineBusyS} | ${go.cpu.machineBusyS} | ${round(ts.cpu.machineBusyS / go.cpu.machineBusyS, 2)} |`,
    `| the kubelet process (CPU-s) | ${ts.cpu.agentS ?? '–'} | ${go.cpu.agentS ?? '–'} | ${round((ts.cpu.agentS ?? NaN) / (go.cpu.agentS ?? NaN), 2)} |`,
    '',
    'Busy CPU-seconds of both cores over the window (/proc/stat), and the top commands (a process reaped in the window brings ' +
      'its whole life’s CPU to its reaper). On this 2-core machine the window is CPU-bound, so (machine busy − kubelet) / 2 cores ' +
      'is about the shortest window any kubelet could have with the same runtime and control plane work.',
    '',
    `Machine-bound floor of kubelet-ts's window, (busy − kubelet) / ${cores} cores: ${round(floorMs(ts) / 1000, 1)} s, ` +
      `${round(floorMs(ts) / go.allReadyMs, 2)} × the Go kubelet's all Ready (the Go kubelet's own: ${round(floorMs(go) / 1000, 1)} s).`,
    '',
    ...runs.map(
      (r) =>
        `- ${r.agent}: ${Object.entries(r.cpu.byCommand ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    ),
    '',
    `![start-up CDF](${chart.split('/').pop()!})`,
    '',
  ].join('\n');
  writeResults(name, result, md);
  console.log(md);
}

await main();
