/**
 * Micro-benchmarks of the hot pure functions (`npm run bench -- micro`), with
 * tinybench, one process, one run:
 * - podStorage.merge: a SET of 1000 pods with 1% changed (fresh objects each
 *   time, as a source decodes them; the "build" task is the cost to subtract);
 * - relist diff: diffSlots over every slot of the record table, 1000 and 5000
 *   pods with 2 containers, steady (no change) and 10% of pods changed;
 * - computePodActions: a running 2-container pod (nothing to do) and a new pod
 *   (create sandbox, start both);
 * - status cache: write (encode + seqlock publish) and read (copy + decode);
 * - CRI list decode: ListContainersResponse with 1k, 5k and 10k containers
 *   (labels and annotations as the kubelet sets them);
 * - status generation: generateAPIPodStatus of a running 2-container pod.
 * Writes bench/results/micro.{json,md}. Args: --time MS per task (default 500).
 */
import { Bench } from 'tinybench';
import pino from 'pino';
import { PodSchema, type Pod } from '../src/api/pod.js';
import { realClock } from '../src/common/clock.js';
import { ContainerState, ListContainersResponse, type Container } from '../src/gen/runtime/v1/api.js';
import { generateAPIPodStatus } from '../src/main/status/generate-pod-status.js';
import { applyV1Defaults } from '../src/main/podconfig/defaults.js';
import { PodStorage } from '../src/main/podconfig/pod-storage.js';
import type { ContainerStatus, PodStatus } from '../src/runtime/types.js';
import { diffSlots } from '../src/workers/relist/pleg-diff.js';
import { capacityForMaxPods, PodStatusCache } from '../src/shared/pod-status-cache.js';
import { RelistRecordTable } from '../src/shared/relist-records.js';
import { computePodActions } from '../src/workers/sync/compute-pod-actions.js';
import { hashContainer } from '../src/pod/container-hash.js';
import { arg, machine, round, taskRows, taskTable, writeResults } from './lib/report.js';

const TIME = Number(arg('time', '500'));
const hex = (n: number, len = 64) => n.toString(16).padStart(len, '0');
const NS = 1_700_000_000_000_000_000n;
let sink: unknown;

// ---------------------------------------------------------------- merge
const podTemplate = (i: number, image = 'registry.example.com/app:1.0'): Pod =>
  applyV1Defaults(
    PodSchema.parse({
      metadata: { name: `web-${i}`, namespace: `ns-${i % 20}`, uid: `00000000-0000-4000-8000-${hex(i, 12)}`, labels: { app: 'web' } },
      spec: {
        containers: ['app', 'sidecar'].map((name) => ({
          name,
          image,
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
          readinessProbe: { httpGet: { port: 8080, path: '/ready' } },
        })),
      },
    }),
  );
const serialized = JSON.stringify(Array.from({ length: 1000 }, (_, i) => podTemplate(i)));
let generation = 0;
const buildSet = () => {
  const pods = JSON.parse(serialized) as Pod[];
  generation++;
  for (let k = 0; k < 10; k++) pods[(generation * 10 + k) % 1000].spec.containers[0].image = `registry.example.com/app:${generation}`;
  return pods;
};
const storage = new PodStorage({ clock: realClock, logger: pino({ level: 'silent' }) });
storage.merge('file', { op: 'SET', pods: buildSet() });

// ---------------------------------------------------------------- relist diff
function recordTable(pods: number, changedFraction: number): RelistRecordTable {
  const t = RelistRecordTable.create({ capacity: capacityForMaxPods(pods) });
  for (const gen of [0, 1]) {
    t.beginGeneration();
    for (let i = 0; i < pods; i++) {
      const changed = gen === 1 && i < pods * changedFraction;
      t.putPod(
        `uid-${i}`,
        [{ id: hex(i), state: 'ready' }],
        [
          { id: hex(i + 1_000_000), state: changed ? 'exited' : 'running' },
          { id: hex(i + 2_000_000), state: 'running' },
        ],
      );
    }
    t.commitGeneration();
  }
  return t;
}

// ---------------------------------------------------------------- computePodActions, status
const pod = podTemplate(1);
const containerStatus = (name: string, i: number): ContainerStatus => ({
  id: hex(10 + i),
  name,
  state: 'running',
  createdAt: NS,
  startedAt: NS,
  finishedAt: 0n,
  exitCode: 0,
  reason: '',
  message: '',
  image: 'registry.example.com/app:1.0',
  imageRef: `sha256:${hex(99)}`,
  restartCount: 0,
  hash: hashContainer(pod.spec.containers[i]),
  sandboxId: hex(1),
});
const running: PodStatus = {
  uid: pod.metadata.uid!,
  name: pod.metadata.name!,
  namespace: pod.metadata.namespace!,
  ips: ['10.0.0.7'],
  sandboxStatuses: [{ id: hex(1), state: 'ready', createdAt: NS, attempt: 0, ips: ['10.0.0.7'], hostNetwork: false }],
  containerStatuses: ['app', 'sidecar'].map(containerStatus),
  timestamp: 1_700_000_000_000,
};
const empty: PodStatus = { ...running, ips: [], sandboxStatuses: [], containerStatuses: [] };
const cache = PodStatusCache.create({ capacity: 16 });
const slot = cache.allocate(running.uid);
cache.write(slot, running);

// ---------------------------------------------------------------- CRI list decode
function listResponse(n: number): Uint8Array {
  const containers: Container[] = Array.from({ length: n }, (_, i) => ({
    id: hex(i),
    podSandboxId: hex(i >> 1),
    metadata: { name: `c${i & 1}`, attempt: 0 },
    image: { image: 'docker.io/kubelet-ts/busybox:1.0', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' },
    imageRef: `sha256:${hex(7)}`,
    state: ContainerState.CONTAINER_RUNNING,
    createdAt: NS + BigInt(i),
    labels: {
      'io.kubernetes.pod.name': `web-${i >> 1}-node-1`,
      'io.kubernetes.pod.namespace': 'default',
      'io.kubernetes.pod.uid': `00000000-0000-4000-8000-${hex(i >> 1, 12)}`,
      'io.kubernetes.container.name': `c${i & 1}`,
    },
    annotations: {
      'io.kubernetes.container.hash': '3c2a1f0e',
      'io.kubernetes.container.restartCount': '0',
      'io.kubernetes.pod.terminationGracePeriod': '30',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
    },
    imageId: '',
  }));
  return ListContainersResponse.encode({ containers }).finish();
}

const bench = new Bench({ name: 'micro', time: TIME, warmupTime: 100 });
bench
  .add('merge: build a fresh 1000-pod SET (baseline)', () => {
    sink = buildSet();
  })
  .add('merge: SET of 1000 pods, 1% changed (incl. build)', () => {
    sink = storage.merge('file', { op: 'SET', pods: buildSet() });
  });
const listSizes: Record<number, number> = {};
for (const pods of [1000, 5000]) {
  for (const [label, fraction] of [
    ['steady', 0],
    ['10% changed', 0.1],
  ] as const) {
    const t = recordTable(pods, fraction);
    const slots = t.slotCount();
    bench.add(`relist diff: ${pods} pods × 2 containers, ${label}`, () => {
      sink = diffSlots(t, 0, slots);
    });
  }
}
bench
  .add('computePodActions: running 2-container pod (no-op)', () => {
    sink = computePodActions(pod, running);
  })
  .add('computePodActions: new pod (sandbox + 2 starts)', () => {
    sink = computePodActions(pod, empty);
  })
  .add('status cache: write (encode + seqlock publish)', () => {
    cache.write(slot, running);
  })
  .add('status cache: read (seqlock copy + decode)', () => {
    sink = cache.read(slot, running.uid);
  });
for (const n of [1000, 5000, 10000]) {
  const bytes = listResponse(n);
  listSizes[n] = bytes.length;
  bench.add(`CRI ListContainers decode: ${n / 1000}k containers (${round(bytes.length / 1024, 0)} KiB)`, () => {
    sink = ListContainersResponse.decode(bytes);
  });
}
bench.add('status generation: running 2-container pod', () => {
  sink = generateAPIPodStatus(pod, running, { now: 1_700_000_001_000, nodeIP: '192.168.1.10' });
});

await bench.run();
void sink;

const results = taskRows(bench);
const meta = { machine: machine(), timePerTaskMs: TIME, listContainersBytes: listSizes };
const md = [
  '# Micro-benchmarks (tinybench)',
  '',
  `One process, one run, ${TIME} ms per task. ${JSON.stringify(meta.machine)}`,
  '',
  ...taskTable(results),
  '',
  'Run: `npm run bench -- micro`',
].join('\n');
writeResults('micro', { ...meta, results }, md);
console.log(md);
