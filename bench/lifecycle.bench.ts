/**
 * Main-thread and worker costs the upstream pod-lifecycle semantics add
 * (`npm run bench -- lifecycle`), with tinybench, one process, one run:
 * - static pod UID: parsing a kube-apiserver manifest (YAML 1.1, exact
 *   integers; the baseline every decode pays), the Go kubelet v1.20.2 UID
 *   (decode into the v1.20 type layout, v1 defaults, conversion, go-spew, md5)
 *   and, for the ratio, the old md5-over-canonical-JSON hash (now the
 *   fallback). Paid once per manifest change, not per sync;
 * - admission: 1000 additions in a row (a node boot), each checked against
 *   the pods admitted before it (inactive-pod filter, resources, node
 *   affinity, host ports, sysctls), 10% of the pods with a hostPort;
 * - computePodActions of a running pod with 2 sidecars, an init container and
 *   2 app containers (the sidecar-aware path, no-op);
 * - container GC selection over 5000 dead containers of 1000 pods.
 * Writes bench/results/lifecycle.{json,md}. Args: --time MS per task (default 500).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { PodSchema, type Pod } from '../src/api/pod.js';
import { canAdmitPod, filterOutInactivePods, type AdmitNode } from '../src/main/admission/admit.js';
import { safeSysctlAllowlist } from '../src/main/admission/sysctls.js';
import { applyV1Defaults, fallbackStaticPodHash } from '../src/main/podconfig/defaults.js';
import { parseManifest } from '../src/main/podconfig/manifest.js';
import { upstreamStaticPodUID } from '../src/main/podconfig/static-pod-uid/static-pod-uid.js';
import type { ContainerStatus, PodStatus } from '../src/runtime/types.js';
import { computePodActions } from '../src/workers/sync/compute-pod-actions.js';
import { hashContainer } from '../src/pod/container-hash.js';
import { DEFAULT_GC_POLICY, selectContainers } from '../src/main/kubelet/container-gc-select.js';
import type { GcContainer } from '../src/workers/protocol/gc-wire.js';
import { arg, machine, round, taskRows, taskTable, writeResults } from './lib/report.js';

const TIME = Number(arg('time', '500'));
let sink: unknown;

// ---------------------------------------------------------------- static pod UID
const manifestPath = join(fileURLToPath(import.meta.url), '../../test/fixtures/static-pod-uid/apiserver.yaml');
const manifest = readFileSync(manifestPath, 'utf8');
const { doc, exact } = parseManifest(manifest, 'apiserver.yaml');
const defaulted = applyV1Defaults(PodSchema.parse(structuredClone(doc)));

// ---------------------------------------------------------------- admission
const node: AdmitNode = {
  allocatable: { cpu: '64', memory: '256Gi', pods: 2000, 'ephemeral-storage': '1Ti', scalar: { 'hugepages-2Mi': '0' } },
  name: 'n1',
  labels: { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', zone: 'a' },
  sysctlAllowlist: safeSysctlAllowlist([6, 1]),
};
const candidates: Pod[] = Array.from({ length: 1000 }, (_, i) =>
  PodSchema.parse({
    metadata: { name: `p${i}`, namespace: 'default', uid: `uid-${i}` },
    spec: {
      nodeSelector: { zone: 'a' },
      containers: [
        {
          name: 'app',
          image: 'busybox:1',
          resources: { requests: { cpu: '10m', memory: '32Mi' } },
          ...(i % 10 === 0 ? { ports: [{ containerPort: 80, hostPort: 20000 + i, protocol: 'TCP' }] } : {}),
        },
      ],
    },
  }),
);
const activity = { isKnownTerminated: () => false, isTerminationRequested: () => false, statusOf: () => undefined };
function admitAll(): number {
  const admitted: Pod[] = [];
  for (const p of candidates) {
    const active = filterOutInactivePods(admitted, activity);
    if (canAdmitPod(p, active, node).admit) admitted.push(p);
  }
  return admitted.length;
}
if (admitAll() !== 1000) throw new Error('admission bench: every pod should fit');

// ---------------------------------------------------------------- computePodActions with sidecars
const sidecarPod: Pod = PodSchema.parse({
  metadata: { name: 'web', namespace: 'default', uid: 'uid-s' },
  spec: {
    restartPolicy: 'Always',
    initContainers: [
      { name: 'side1', image: 'b:1', restartPolicy: 'Always' },
      { name: 'init', image: 'b:1' },
      { name: 'side2', image: 'b:1', restartPolicy: 'Always' },
    ],
    containers: [
      { name: 'app', image: 'b:1' },
      { name: 'app2', image: 'b:1' },
    ],
  },
});
const cs = (name: string, state: ContainerStatus['state'], n: number): ContainerStatus => ({
  id: `id-${name}`,
  name,
  state,
  createdAt: BigInt(n),
  startedAt: BigInt(n),
  finishedAt: state === 'exited' ? BigInt(n + 1) : 0n,
  exitCode: 0,
  reason: '',
  message: '',
  image: 'b:1',
  imageRef: 'b:1',
  restartCount: 0,
  hash: hashContainer({ name, image: 'b:1' }),
  sandboxId: 'sb',
});
const sidecarStatus: PodStatus = {
  uid: 'uid-s',
  name: 'web',
  namespace: 'default',
  ips: ['10.0.0.2'],
  sandboxStatuses: [{ id: 'sb', state: 'ready', createdAt: 1n, attempt: 0, ips: ['10.0.0.2'], hostNetwork: false }],
  containerStatuses: [
    cs('side1', 'running', 1),
    cs('init', 'exited', 2),
    cs('side2', 'running', 3),
    cs('app', 'running', 4),
    cs('app2', 'running', 5),
  ],
  timestamp: 0,
};

// ---------------------------------------------------------------- container GC selection
const NOW = 1_700_000_000_000;
const dead: GcContainer[] = Array.from({ length: 5000 }, (_, i) => ({
  id: `c${i}`,
  uid: `uid-${i % 1000}`,
  name: `c${i % 2}`,
  sandboxId: `sb-${i % 1000}`,
  running: false,
  createdAt: BigInt(NOW - i) * 1_000_000n,
}));
const gcInput = { policy: DEFAULT_GC_POLICY, allSourcesReady: true, removable: (uid: string) => uid.endsWith('7'), now: NOW };

const bench = new Bench({ name: 'lifecycle', time: TIME, warmupTime: 100 });
bench
  .add('static pod: parse the kube-apiserver manifest (baseline)', () => {
    sink = parseManifest(manifest, 'apiserver.yaml');
  })
  .add('static pod UID: Go kubelet v1.20.2 (decode, defaults, go-spew, md5)', () => {
    sink = upstreamStaticPodUID(exact);
  })
  .add('static pod UID: md5 of canonical JSON (old hash, now the fallback)', () => {
    sink = fallbackStaticPodHash(defaulted, '/etc/kubernetes/manifests/kube-apiserver.yaml', true, 'n1');
  })
  .add('admission: 1000 additions in a row (10% with a hostPort)', () => {
    sink = admitAll();
  })
  .add('computePodActions: running pod with 2 sidecars, 1 init, 2 apps (no-op)', () => {
    sink = computePodActions(sidecarPod, sidecarStatus);
  })
  .add('container GC: select among 5000 dead containers of 1000 pods', () => {
    sink = selectContainers(dead, gcInput);
  });
await bench.run();
void sink;

const results = taskRows(bench);
const meanOf = (prefix: string) => {
  const r = results.find((x) => x.name.startsWith(prefix));
  return r && 'opsPerSec' in r ? r.meanNs : NaN;
};
const uid = meanOf('static pod UID: Go');
const old = meanOf('static pod UID: md5');
const meta = { machine: machine(), timePerTaskMs: TIME, uidOverOldHash: round(uid / old, 2) };
const md = [
  '# Pod lifecycle costs (tinybench)',
  '',
  `One process, one run, ${TIME} ms per task. ${JSON.stringify(meta.machine)}`,
  '',
  ...taskTable(results),
  '',
  `The upstream-identical UID costs ${meta.uidOverOldHash}× the old hash; both are paid once per manifest change.`,
  '',
  'Run: `npm run bench -- lifecycle`',
].join('\n');
writeResults('lifecycle', { meta, results }, md);
console.log(md);
