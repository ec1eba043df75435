/**
 * Microbenchmark of the shared-memory layouts: encode+write and read+decode
 * of a 2-container PodStatus through the pod status cache, the codec alone,
 * structuredClone as the message-copy baseline, and metric bumps.
 * Run: `npx tsx bench/shared-memory.bench.ts`. Writes bench/results/shared-memory.{json,md}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { taskRows } from './lib/report.js';
import type { PodStatus } from '../src/runtime/types.js';
import { MetricBlock } from '../src/shared/metric-block.js';
import { PodStatusCache } from '../src/shared/pod-status-cache.js';
import { decodePodStatus, encodePodStatus } from '../src/shared/pod-status-codec.js';

const NS = 1_700_000_000_000_000_123n;
const uid = '6f1c2a3e-8a55-4e3e-9f4c-1c7b0f3d2e11';
const sandboxId = 'c'.repeat(64);
const status: PodStatus = {
  uid,
  name: 'web-0',
  namespace: 'default',
  ips: ['10.0.0.7'],
  timestamp: 1_700_000_000_123,
  sandboxStatuses: [{ id: sandboxId, state: 'ready', createdAt: NS, attempt: 0, ips: ['10.0.0.7'], hostNetwork: false }],
  containerStatuses: ['app', 'sidecar'].map((name, i) => ({
    id: String(i + 1).repeat(64),
    name,
    state: 'running' as const,
    createdAt: NS,
    startedAt: NS + 1n,
    finishedAt: 0n,
    exitCode: 0,
    reason: '',
    message: '',
    image: `docker.io/library/${name}:1.0`,
    imageRef: 'sha256:' + 'b'.repeat(64),
    restartCount: 0,
    hash: '5f3e2a1b',
    sandboxId,
  })),
};

const cache = PodStatusCache.create({ capacity: 16 });
const slot = cache.allocate(uid);
cache.write(slot, status);
const scratch = new Uint8Array(16 * 1024);
const encodedLength = encodePodStatus(status, scratch);
const metrics = MetricBlock.create({
  counters: [{ name: 'c' }],
  histograms: [{ name: 'h', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] }],
});
const counter = metrics.counterId('c');
const hist = metrics.histogramId('h');

let sink: unknown;
const bench = new Bench({ name: 'shared-memory', time: 1000 });
bench
  .add('cache.write (encode + seqlock publish)', () => {
    cache.write(slot, status);
  })
  .add('cache.read (seqlock copy + decode, uid checked)', () => {
    sink = cache.read(slot, uid);
  })
  .add('encodePodStatus (private buffer)', () => {
    sink = encodePodStatus(status, scratch);
  })
  .add('decodePodStatus (private buffer)', () => {
    sink = decodePodStatus(scratch, encodedLength);
  })
  .add('structuredClone (message-copy baseline)', () => {
    sink = structuredClone(status);
  })
  .add('metric inc', () => {
    metrics.inc(counter);
  })
  .add('metric observe', () => {
    metrics.observe(hist, 0.0123);
  });

await bench.run();
void sink;
console.table(bench.table());

const results = taskRows(bench);
const out = join(dirname(fileURLToPath(import.meta.url)), 'results');
mkdirSync(out, { recursive: true });
const meta = { node: process.version, encodedBytes: encodedLength, date: new Date().toISOString() };
writeFileSync(join(out, 'shared-memory.json'), JSON.stringify({ ...meta, results }, null, 2) + '\n');
const md = [
  `# shared-memory (${meta.node}, 2-container PodStatus = ${encodedLength} bytes)`,
  '',
  '| task | ops/s | mean ns | p50 ns | p99 ns |',
  '|---|---:|---:|---:|---:|',
  ...results.map((r) =>
    'opsPerSec' in r ? `| ${r.name} | ${r.opsPerSec} | ${r.meanNs} | ${r.p50Ns} | ${r.p99Ns} |` : `| ${r.name} | ${r.state} | | | |`,
  ),
  '',
].join('\n');
writeFileSync(join(out, 'shared-memory.md'), md);
