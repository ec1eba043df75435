/**
 * The relist's list decode (`npm run bench -- relist-decode`): the generated
 * ts-proto decoder against the partial decode (src/runtime/relist-wire.ts)
 * of the relist's two list responses, with tinybench, one process.
 * Responses are synthesized to look like containerd 1.6's for kubelet-made
 * pods: 64-hex ids, the kubelet's labels and annotations on every container
 * and sandbox, image spec and ref, 1 container per pod (250 and 1000 pods).
 * Every round runs all tasks; each round's partial/full ratio of means is
 * reported (the machine is shared and noisy: compare within a round).
 * Args: --time MS per task (default 500) --rounds N (default 3) --out NAME.
 * Writes bench/results/<out>.{json,md} (default relist-decode).
 */
import { Bench } from 'tinybench';
import {
  Container,
  ContainerState,
  ListContainersResponse,
  ListPodSandboxResponse,
  PodSandbox,
  PodSandboxState,
} from '../src/gen/runtime/v1/api.js';
import { groupPods } from '../src/runtime/convert.js';
import { decodeListedContainers, decodeListedSandboxes } from '../src/runtime/relist-wire.js';
import { arg, machine, round, taskRows, taskTable, writeResults, type TaskRow } from './lib/report.js';

const TIME = Number(arg('time', '500'));
const ROUNDS = Number(arg('rounds', '3'));
const OUT = arg('out', 'relist-decode');
const SIZES = [250, 1000];
const hex = (n: number, salt: number) => (n * 2654435761 + salt).toString(16).padStart(64, 'a').slice(-64);
const NS = 1_763_000_000_000_000_000n;
let sink: unknown;

function podLabels(i: number): Record<string, string> {
  return {
    'io.kubernetes.pod.name': `density-${i}-node-1`,
    'io.kubernetes.pod.namespace': 'default',
    'io.kubernetes.pod.uid': `6f1c2a3b-${String(i).padStart(4, '0')}-4e5f-8a9b-0c1d2e3f4a5b`,
  };
}

function responses(pods: number): { sandboxes: Buffer; containers: Buffer } {
  const items: PodSandbox[] = Array.from({ length: pods }, (_, i) =>
    PodSandbox.fromPartial({
      id: hex(i, 1),
      metadata: { name: `density-${i}-node-1`, uid: podLabels(i)['io.kubernetes.pod.uid'], namespace: 'default', attempt: 0 },
      state: PodSandboxState.SANDBOX_READY,
      createdAt: NS + BigInt(i) * 1_000_000n,
      labels: { ...podLabels(i), app: 'density', 'io.kubernetes.container.name': 'POD' },
      annotations: {
        'kubernetes.io/config.hash': hex(i, 3).slice(0, 32),
        'kubernetes.io/config.seen': '2026-11-23T04:44:14.394172301Z',
        'kubernetes.io/config.source': 'file',
      },
      runtimeHandler: '',
    }),
  );
  const containers: Container[] = Array.from({ length: pods }, (_, i) =>
    Container.fromPartial({
      id: hex(i, 2),
      podSandboxId: hex(i, 1),
      metadata: { name: 'app', attempt: 0 },
      image: { image: `sha256:${hex(7, 7)}` },
      imageRef: `sha256:${hex(7, 7)}`,
      state: ContainerState.CONTAINER_RUNNING,
      createdAt: NS + BigInt(i) * 1_000_000n + 500_000n,
      labels: { ...podLabels(i), 'io.kubernetes.container.name': 'app' },
      annotations: {
        'io.kubernetes.container.hash': (0x3c2a1f0e + i).toString(16),
        'io.kubernetes.container.restartCount': '0',
        'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
        'io.kubernetes.container.terminationMessagePolicy': 'File',
        'io.kubernetes.pod.terminationGracePeriod': '30',
      },
    }),
  );
  return {
    sandboxes: Buffer.from(ListPodSandboxResponse.encode({ items }).finish()),
    containers: Buffer.from(ListContainersResponse.encode({ containers }).finish()),
  };
}

const inputs = SIZES.map((n) => ({ n, ...responses(n) }));
const rounds: { rows: TaskRow[]; ratios: Record<string, number> }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const bench = new Bench({ name: 'relist-decode', time: TIME, warmupTime: 100 });
  for (const { n, sandboxes, containers } of inputs) {
    bench
      .add(`full ts-proto decode, ${n} pods (both lists)`, () => {
        sink = [ListPodSandboxResponse.decode(sandboxes), ListContainersResponse.decode(containers)];
      })
      .add(`partial decode, ${n} pods (both lists)`, () => {
        sink = [decodeListedSandboxes(sandboxes), decodeListedContainers(containers)];
      })
      .add(`partial decode + groupPods, ${n} pods`, () => {
        sink = groupPods(decodeListedSandboxes(sandboxes), decodeListedContainers(containers));
      });
  }
  await bench.run();
  const rows = taskRows(bench);
  const mean = (name: string) => {
    const row = rows.find((x) => x.name === name);
    return row && 'meanNs' in row ? row.meanNs : NaN;
  };
  const ratios: Record<string, number> = {};
  for (const { n } of inputs) {
    ratios[`${n} pods`] = round(mean(`partial decode, ${n} pods (both lists)`) / mean(`full ts-proto decode, ${n} pods (both lists)`), 3);
  }
  rounds.push({ rows, ratios });
  console.log(`round ${r + 1}:`, ratios);
}
void sink;

const sizes = Object.fromEntries(
  inputs.map(({ n, sandboxes, containers }) => [n, { sandboxesBytes: sandboxes.length, containersBytes: containers.length }]),
);
const md = [
  '# Relist list decode: generated decoder vs partial decode (tinybench)',
  '',
  `${new Date().toISOString()}, ${ROUNDS} rounds × ${TIME} ms per task; machine ${JSON.stringify(machine())} (shared, noisy).`,
  `Responses synthesized like containerd 1.6's for kubelet-made pods (1 container per pod): ${Object.entries(sizes)
    .map(
      ([n, s]) =>
        `${n} pods = ListPodSandbox ${round(s.sandboxesBytes / 1024, 1)} KiB + ListContainers ${round(s.containersBytes / 1024, 1)} KiB`,
    )
    .join('; ')}.`,
  '',
  '| round | ' + inputs.map(({ n }) => `partial / full, ${n} pods`).join(' | ') + ' |',
  '|---|' + inputs.map(() => '---:').join('|') + '|',
  ...rounds.map((x, i) => `| ${i + 1} | ${inputs.map(({ n }) => x.ratios[`${n} pods`]).join(' | ')} |`),
  '',
  ...rounds.flatMap((x, i) => [`Round ${i + 1}:`, '', ...taskTable(x.rows), '']),
  `Run: \`npm run bench -- relist-decode --rounds ${ROUNDS} --time ${TIME}\``,
].join('\n');
writeResults(OUT, { machine: machine(), timePerTaskMs: TIME, sizes, rounds }, md);
console.log(md);
