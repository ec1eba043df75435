/**
 * QoS and pod cgroups side by side: the upstream Go kubelet v1.20.2 and
 * kubelet-ts run the same static pods, one after the other, on a containerd
 * of this benchmark's own (the Go kubelet kills runtime pods it does not
 * know), each with cgroupsPerQOS true, enforceNodeAllocatable [pods], the
 * same reservations and podPidsLimit, and the same cgroupRoot (made before
 * and removed after each run). For each pod it reads where its app
 * container's process sits (/proc/<pid>/cgroup) and the pod cgroup's files;
 * for the tiers, kubepods, burstable and besteffort. Pod uids differ (a
 * static pod's uid hashes its node's name) and read as <uid>.
 *
 *   npm run bench -- cgroups [--octet 151] [--out cgroups] [--docs]
 *
 * --octet: its containerd's pod network 10.<octet>.0.0/16; --docs: also
 * rewrite the compact table in docs/cgroups.md (between its markers).
 *
 * Writes bench/results/<out>.{json,md}: one row per value, both agents'
 * figures and whether they agree. Runs as root on a cgroup v1 host.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CriClient } from '../src/cri/client.js';
import { LABEL_POD_NAMESPACE, LABEL_POD_NAME } from '../src/runtime/types.js';
import { AgentProcess } from '../test/e2e/agent-harness.js';
import { CGROUP_FS, createCgroupRoot, removeCgroupTree } from '../test/e2e/cgroup-root.js';
import { pollUntil } from '../test/helpers/poll.js';
import { PrivateContainerd } from '../test/helpers/private-containerd.js';
import { GO_KUBELET_BIN, GoKubelet } from './lib/go-kubelet.js';

const { values: args } = parseArgs({
  options: {
    octet: { type: 'string', default: '151' },
    out: { type: 'string', default: 'cgroups' },
    /** Also rewrite the table in docs/cgroups.md (between its cgroups-peer markers). */
    docs: { type: 'boolean', default: false },
  },
});
const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';
const PIDS_LIMIT = 200;
const SYSTEM_RESERVED = { memory: '100Mi' };
const KUBE_RESERVED = { cpu: '100m' };
const RESULTS = join(import.meta.dirname, 'results');

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
const c = (name: string, resources: Res = {}) => ({ name, image: IMAGE, command: ['sh', '-c', 'sleep 3600'], resources });
/** The pods: name → spec. The app container (read for paths and oom_score_adj) is the first. */
const PODS: Record<string, Record<string, unknown>> = {
  guaranteed: { containers: [c('app', { limits: { cpu: '200m', memory: '64Mi' }, requests: { cpu: '200m', memory: '64Mi' } })] },
  burstable: { containers: [c('app', { requests: { cpu: '100m', memory: '16Mi' }, limits: { cpu: '300m', memory: '128Mi' } })] },
  'burstable-partial': {
    // One container without limits: no pod quota, no pod memory limit.
    containers: [c('app', { requests: { cpu: '50m' }, limits: { cpu: '100m', memory: '32Mi' } }), c('side')],
  },
  'burstable-init': {
    // The init container's larger limits win over the containers' sum.
    initContainers: [
      { ...c('init', { requests: { cpu: '400m', memory: '96Mi' }, limits: { cpu: '500m', memory: '96Mi' } }), command: ['true'] },
    ],
    containers: [c('app', { requests: { cpu: '100m', memory: '16Mi' }, limits: { cpu: '200m', memory: '32Mi' } })],
  },
  besteffort: { containers: [c('app')] },
};

interface Reading {
  /** `<pod>` or `tier` → field → value */
  [row: string]: Record<string, string>;
}

function read(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : '(none)';
}

/** The cgroup of `pid` for one v1 controller, relative to `root`, uids as <uid>. */
function cgroupOf(pid: number, controller: string, root: string): string {
  for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
    const [, ctrls, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (ctrls?.split(',').includes(controller)) {
      const rel = path.startsWith(`${root}/`) ? path.slice(root.length) : `(outside the root) ${path}`;
      return rel.replace(/pod[0-9a-f-]{32,36}/, 'pod<uid>').replace(/\/[0-9a-f]{64}$/, '/<container>');
    }
  }
  return '(none)';
}

/** Pids of the app container of each pod of `namespace`, once all are running. */
async function appPids(cri: CriClient, namespace: string, nodeName: string): Promise<Map<string, number>> {
  return pollUntil(
    'every pod app container running',
    async () => {
      const out = new Map<string, number>();
      const cs = (await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: namespace } } })).containers;
      for (const ctr of cs) {
        if (ctr.metadata?.name !== 'app') continue;
        const st = await cri.containerStatus({ containerId: ctr.id, verbose: true });
        const pid = (JSON.parse(st.info['info'] ?? '{}') as { pid?: number }).pid;
        const pod = Object.keys(PODS).find((p) => ctr.labels[LABEL_POD_NAME] === `${p}-${nodeName}`);
        if (pid && pod) out.set(pod, pid);
      }
      return out.size === Object.keys(PODS).length ? out : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** Every value, for each pod (its app container's process and pod cgroup) and each tier. */
function readAll(pids: Map<string, number>, root: string): Reading {
  const v1 = (ctrl: string, rel: string, file: string) => read(join(CGROUP_FS, ctrl, root, rel, file));
  const out: Reading = {};
  for (const pod of Object.keys(PODS)) {
    const pid = pids.get(pod)!;
    const podCg = cgroupOf(pid, 'memory', root).replace(/\/<container>$/, '');
    const rel = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => /:memory:/.test(l))!
      .split(':')[2]
      .replace(/\/[0-9a-f]{64}$/, '')
      .slice(root.length);
    out[pod] = {
      'container cgroup (cpu)': cgroupOf(pid, 'cpu', root),
      'container cgroup (memory)': cgroupOf(pid, 'memory', root),
      'container cgroup (pids)': cgroupOf(pid, 'pids', root),
      'pod cgroup': podCg,
      'cpu.shares': v1('cpu', rel, 'cpu.shares'),
      'cpu.cfs_quota_us': v1('cpu', rel, 'cpu.cfs_quota_us'),
      'cpu.cfs_period_us': v1('cpu', rel, 'cpu.cfs_period_us'),
      'memory.limit_in_bytes': v1('memory', rel, 'memory.limit_in_bytes'),
      'pids.max': v1('pids', rel, 'pids.max'),
      'app oom_score_adj': read(`/proc/${pid}/oom_score_adj`),
    };
  }
  for (const tier of ['kubepods', 'kubepods/burstable', 'kubepods/besteffort']) {
    out[tier] = {
      'cpu.shares': v1('cpu', tier, 'cpu.shares'),
      'cpu.cfs_quota_us': v1('cpu', tier, 'cpu.cfs_quota_us'),
      'memory.limit_in_bytes': v1('memory', tier, 'memory.limit_in_bytes'),
      'pids.max': v1('pids', tier, 'pids.max'),
    };
  }
  return out;
}

interface Runner {
  writeManifest(file: string, pod: Record<string, unknown>): void;
  start(): Promise<void>;
  cleanup(): Promise<void>;
}

async function runAgent(kind: 'go' | 'ts', endpoint: string, cri: CriClient): Promise<Reading> {
  const id = randomUUID().slice(0, 6);
  const namespace = `cgcmp-${kind}-${id}`;
  const root = `/kts-cgcmp-${process.pid}`;
  const nodeName = `cgcmp-${id}`;
  createCgroupRoot(root);
  const agent: Runner =
    kind === 'go'
      ? new GoKubelet({
          endpoint,
          nodeName,
          namespace,
          extraConfig: {
            cgroupsPerQOS: true,
            cgroupRoot: root,
            enforceNodeAllocatable: ['pods'],
            systemReserved: SYSTEM_RESERVED,
            kubeReserved: KUBE_RESERVED,
            podPidsLimit: PIDS_LIMIT,
          },
        })
      : new AgentProcess(endpoint, nodeName, namespace, [
          `--cgroup-root=${root}`,
          `--pod-max-pids=${PIDS_LIMIT}`,
          `--system-reserved=memory=${SYSTEM_RESERVED.memory}`,
          `--kube-reserved=cpu=${KUBE_RESERVED.cpu}`,
        ]);
  try {
    for (const [name, spec] of Object.entries(PODS)) {
      agent.writeManifest(name, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace },
        spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, ...spec },
      });
    }
    const t0 = Date.now();
    await agent.start();
    const pids = await appPids(cri, namespace, nodeName);
    console.log(`${kind}: ${pids.size} pods running in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // The burstable tier's shares follow the pods (both agents update them before making a pod cgroup): cpu
    // requests 100m + 50m + max(100m, init 400m) = 550m → 563 shares once every Burstable pod counts.
    await pollUntil('the burstable tier to count every pod', () => readAll(pids, root)['kubepods/burstable']['cpu.shares'] === '563', {
      timeoutMs: 30_000,
      intervalMs: 500,
    }).catch(() => console.log(`${kind}: the burstable tier's shares did not reach 563 (kept as read)`));
    return readAll(pids, root);
  } finally {
    await agent.cleanup();
    removeCgroupTree(root);
  }
}

const DOCS = join(import.meta.dirname, '../docs/cgroups.md');
const START = '<!-- cgroups-peer:start (npm run bench -- cgroups --docs) -->';
const END = '<!-- cgroups-peer:end -->';

/** One value for both agents, or both when they differ. */
function cell(go: string | undefined, ts: string | undefined): string {
  if (go === undefined && ts === undefined) return '';
  return go === ts ? `\`${go}\`` : `**Go \`${go ?? '(none)'}\`, ts \`${ts ?? '(none)'}\`**`;
}

/** The compact table of docs/cgroups.md: a row per pod and tier, a cell per value. */
function writeDocsTable(go: Reading, ts: Reading, summary: string): void {
  const cols: [string, string][] = [
    ['container cgroup (memory)', 'container cgroup'],
    ['cpu.shares', 'cpu.shares'],
    ['cpu.cfs_quota_us', 'cfs quota'],
    ['memory.limit_in_bytes', 'memory limit'],
    ['pids.max', 'pids.max'],
    ['app oom_score_adj', 'oom_score_adj'],
  ];
  const lines = [
    summary,
    'Every container cgroup path is the same for the cpu, memory and pids controllers under both agents unless the table says otherwise.',
    '',
    `| pod or tier | ${cols.map(([, h]) => h).join(' | ')} |`,
    `|---|${cols.map(() => '---').join('|')}|`,
  ];
  for (const row of Object.keys(go)) {
    const paths = ['cpu', 'pids'].every(
      (c) =>
        go[row][`container cgroup (${c})`] === go[row]['container cgroup (memory)'] &&
        ts[row]?.[`container cgroup (${c})`] === ts[row]?.['container cgroup (memory)'],
    );
    lines.push(
      `| ${row} | ${cols.map(([k]) => cell(go[row][k], ts[row]?.[k]) + (k.startsWith('container') && !paths ? ' (not in every controller)' : '')).join(' | ')} |`,
    );
  }
  const doc = readFileSync(DOCS, 'utf8');
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${DOCS} has no ${START} … ${END} markers`);
  writeFileSync(DOCS, `${doc.slice(0, a + START.length)}\n${lines.join('\n')}\n${doc.slice(b)}`);
  console.log(`${DOCS}: table rewritten`);
}

async function main(): Promise<void> {
  if (!existsSync(GO_KUBELET_BIN)) throw new Error(`the Go kubelet is not at ${GO_KUBELET_BIN} (scripts/control-plane.sh build)`);
  const containerd = new PrivateContainerd('cgcmp', Number(args.octet));
  const endpoint = await containerd.up();
  const cri = new CriClient({ runtimeEndpoint: endpoint, timeoutMs: 60_000 });
  try {
    const go = await runAgent('go', endpoint, cri);
    const ts = await runAgent('ts', endpoint, cri);
    const rows: { row: string; field: string; go: string; ts: string; same: boolean }[] = [];
    for (const row of Object.keys(go)) {
      for (const field of Object.keys(go[row])) {
        const g = go[row][field];
        const t = ts[row]?.[field] ?? '(none)';
        rows.push({ row, field, go: g, ts: t, same: g === t });
      }
    }
    const differ = rows.filter((r) => !r.same).length;
    const summary =
      `\`npm run bench -- cgroups\`, ${new Date().toISOString().slice(0, 10)}: the same ${Object.keys(PODS).length} static pods under each agent ` +
      `(cgroup v${existsSync(join(CGROUP_FS, 'cgroup.controllers')) ? 2 : 1}, containerd cgroupfs), cgroupsPerQOS true, ` +
      `enforceNodeAllocatable [pods], systemReserved memory=${SYSTEM_RESERVED.memory}, kubeReserved cpu=${KUBE_RESERVED.cpu}, ` +
      `podPidsLimit ${PIDS_LIMIT}; paths relative to the cgroupRoot. ${rows.length - differ} of ${rows.length} values agree.`;
    const md = [
      `# QoS and pod cgroups: Go kubelet v1.20.2 and kubelet-ts`,
      '',
      summary,
      '',
      '| cgroup / pod | value | Go v1.20.2 | kubelet-ts | |',
      '|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.row} | ${r.field} | \`${r.go}\` | \`${r.ts}\` | ${r.same ? 'same' : '**differs**'} |`),
      '',
    ].join('\n');
    writeFileSync(join(RESULTS, `${args.out}.md`), md);
    if (args.docs) writeDocsTable(go, ts, summary);
    writeFileSync(join(RESULTS, `${args.out}.json`), JSON.stringify({ pods: PODS, go, ts, rows }, null, 2) + '\n');
    console.log(md);
  } finally {
    cri.close();
    await containerd.down();
  }
}

await main();
