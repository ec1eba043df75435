/**
 * podStorage.merge cost: SET updates of 1000 pods from one source with 1% of
 * the pods changed per update (each update changes a different 10), and the
 * same with nothing changed. Every update is built from fresh objects (as a
 * source hands over newly decoded pods), so the "build SET" task is the
 * baseline to subtract. Run: `npx tsx bench/merge.bench.ts`.
 * Writes bench/results/merge.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Bench } from 'tinybench';
import { PodSchema, type Pod } from '../src/api/pod.js';
import { realClock } from '../src/common/clock.js';
import { applyV1Defaults } from '../src/main/podconfig/defaults.js';
import { PodStorage } from '../src/main/podconfig/pod-storage.js';

const PODS = 1000;
const CHANGED = PODS / 100;

const template = (i: number): Pod =>
  applyV1Defaults(
    PodSchema.parse({
      metadata: {
        name: `web-${i}`,
        namespace: `ns-${i % 20}`,
        uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        labels: { app: 'web', shard: String(i % 7) },
        annotations: { 'example.com/owner': 'team-a' },
      },
      spec: {
        containers: ['app', 'sidecar'].map((name) => ({
          name,
          image: `registry.example.com/${name}:1.0`,
          ports: [{ containerPort: 8080 }],
          env: [{ name: 'MODE', value: 'prod' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          readinessProbe: { httpGet: { port: 8080, path: '/ready' } },
        })),
        volumes: [{ name: 'data' }],
      },
      status: { phase: 'Running' },
    }),
  );

const serialized = JSON.stringify(Array.from({ length: PODS }, (_, i) => template(i)));
let generation = 0;

/** A fresh SET; `changed` pods (a window that moves every call) get a new image. */
function buildSet(changed: number): Pod[] {
  const pods = JSON.parse(serialized) as Pod[];
  generation++;
  const start = (generation * CHANGED) % PODS;
  for (let k = 0; k < changed; k++) pods[(start + k) % PODS].spec.containers[0].image = `registry.example.com/app:${generation}`;
  return pods;
}

const logger = pino({ level: 'silent' });
const storage = new PodStorage({ clock: realClock, logger });
storage.merge('api', { op: 'SET', pods: buildSet(0) });
let deltas = 0;

const bench = new Bench({ name: 'merge', time: 2000, warmupTime: 300 });
bench
  .add('build SET (baseline: fresh 1000-pod list)', () => {
    buildSet(CHANGED);
  })
  .add('merge SET 1000 pods, 1% changed', () => {
    deltas += storage.merge('api', { op: 'SET', pods: buildSet(CHANGED) }).length;
  })
  .add('merge SET 1000 pods, unchanged', () => {
    deltas += storage.merge('api', { op: 'SET', pods: buildSet(0) }).length;
  });

await bench.run();
console.table(bench.table());

interface TaskStats {
  name: string;
  state: string;
  opsPerSec?: number;
  meanUs?: number;
  p50Us?: number;
  p99Us?: number;
  samples?: number;
}
const stats: TaskStats[] = bench.tasks.map((t) => {
  const r = t.result;
  if (r.state !== 'completed') return { name: t.name, state: r.state };
  return {
    state: r.state,
    name: t.name,
    opsPerSec: Math.round(r.throughput.mean),
    meanUs: +(r.latency.mean * 1000).toFixed(1),
    p50Us: +(r.latency.p50 * 1000).toFixed(1),
    p99Us: +((r.latency.p99 ?? NaN) * 1000).toFixed(1),
    samples: r.latency.samplesCount,
  };
});
const base = stats[0]?.meanUs ?? NaN;
const results = {
  benchmark: 'podStorage.merge',
  pods: PODS,
  changedPerUpdate: CHANGED,
  node: process.version,
  date: new Date().toISOString(),
  tasks: stats,
  mergeOnlyUs: Object.fromEntries(stats.slice(1).map((s) => [s.name, s.meanUs === undefined ? null : +(s.meanUs - base).toFixed(1)])),
  deltasDelivered: deltas,
};
console.log('merge cost per update excluding SET construction (µs):', results.mergeOnlyUs);
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'merge.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${out}`);
