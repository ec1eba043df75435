/**
 * The eviction manager on the main thread (src/main/eviction/):
 *  1. time per synchronize at 1000 active pods, with the stats already
 *     measured (in the agent they come from the worker pool: criStats and
 *     diskUsage), in four cases: no threshold met; memory pressure (rank 1000
 *     pods, evict one); disk pressure (node-level reclaim, a second stats
 *     read, rank, evict one); every pod with an emptyDir sizeLimit checked
 *     (none over). Target: p99 ≤ 20 ms.
 *  2. time from a threshold crossing to the eviction request, with the real
 *     clock and a 1 s monitoring period, the crossing at a random moment:
 *     at most one period (the pod's grace is then the pod worker's).
 * Run: `npm run bench -- eviction`. Writes bench/results/eviction.{json,md}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { Pod } from '../src/api/pod.js';
import { realClock } from '../src/common/clock.js';
import { EvictionManager } from '../src/main/eviction/eviction-manager.js';
import type { EvictionStatsProvider, NodeSummary, PodsSummary, PodUsage } from '../src/main/eviction/eviction-stats.js';
import { parseThresholds, type Observations } from '../src/main/eviction/thresholds.js';

const PODS = 1000;
const ITERATIONS = 300;
const MI = 1024n * 1024n;
const GI = 1024n * MI;

const pods: Pod[] = Array.from({ length: PODS }, (_, i) => {
  const qos = i % 3;
  const resources =
    qos === 0
      ? {}
      : qos === 1
        ? { requests: { cpu: '100m', memory: '128Mi', 'ephemeral-storage': '1Gi' } }
        : { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `web-${i}`, namespace: `ns-${i % 20}`, uid: `uid-${i}` },
    spec: {
      priority: (i % 5) * 100,
      containers: [
        { name: 'app', image: 'busybox', resources },
        { name: 'sidecar', image: 'busybox' },
      ],
      volumes: [
        { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
        { name: 'cfg', configMap: { name: 'c' } },
      ],
    },
  } as Pod;
});

const usage: PodUsage[] = pods.map((p, i) => ({
  uid: p.metadata.uid!,
  memoryWorkingSetBytes: BigInt(20 + ((i * 37) % 300)) * MI,
  processes: 2 + (i % 7),
  containers: ['app', 'sidecar'].map((name, k) => ({
    name,
    memoryWorkingSetBytes: BigInt(10 + ((i * 13 + k) % 150)) * MI,
    rootfs: { usedBytes: BigInt(4096 * (1 + ((i + k) % 50))), inodesUsed: 10n },
    logs: { usedBytes: BigInt(8192 * (1 + (i % 30))), inodesUsed: 2n },
  })),
  volumes: [
    { name: 'scratch', usedBytes: BigInt((i * 97) % 500) * MI, inodesUsed: 5n },
    { name: 'cfg', usedBytes: 8192n, inodesUsed: 3n },
  ],
}));

class FixedStats implements EvictionStatsProvider {
  constructor(public observations: Observations) {}
  node(): Promise<NodeSummary> {
    return Promise.resolve({ observations: this.observations, dedicatedImageFs: false });
  }
  pods(): Promise<PodsSummary> {
    return Promise.resolve({ pods: usage, observations: {} });
  }
}

const calm: Observations = {
  'memory.available': { available: 8n * GI, capacity: 16n * GI },
  'nodefs.available': { available: 500n * GI, capacity: 1000n * GI },
  'nodefs.inodesFree': { available: 10_000_000n, capacity: 20_000_000n },
  'imagefs.available': { available: 500n * GI, capacity: 1000n * GI },
  'imagefs.inodesFree': { available: 10_000_000n, capacity: 20_000_000n },
  'pid.available': { available: 30_000n, capacity: 32_768n },
};
const logger = pino({ level: 'silent' });
const thresholds = parseThresholds({
  evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' },
  evictionSoft: {},
  evictionSoftGracePeriod: {},
  evictionMinimumReclaim: {},
  evictionMaxPodGracePeriod: 0,
});

function manager(stats: EvictionStatsProvider, onKill: () => void = () => undefined, monitoringPeriodMs?: number) {
  return new EvictionManager({
    thresholds,
    stats,
    activePods: () => pods,
    killPod: onKill,
    podCleanedUp: () => true,
    reclaimer: { deleteAllUnusedContainers: () => Promise.resolve(), deleteUnusedImages: () => Promise.resolve() },
    recorder: { record: () => undefined },
    nodeName: 'bench',
    pressureTransitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 0,
    monitoringPeriodMs,
    clock: realClock,
    logger,
  });
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function synchronizeCost(name: string, observations: Observations, withLimits: boolean) {
  const m = manager(new FixedStats(observations));
  if (!withLimits) for (const p of pods) p.spec.volumes![0].emptyDir = {};
  else for (const p of pods) p.spec.volumes![0].emptyDir = { sizeLimit: '1Gi' };
  let evicted = 0;
  for (let i = 0; i < 20; i++) await m.synchronize(); // warm-up
  const ms: number[] = [];
  const cpuMs: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    evicted += (await m.synchronize()).length;
    ms.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpuMs.push((c.user + c.system) / 1000);
  }
  ms.sort((a, b) => a - b);
  cpuMs.sort((a, b) => a - b);
  return {
    name,
    samples: ms.length,
    p50Ms: +pct(ms, 50).toFixed(2),
    p99Ms: +pct(ms, 99).toFixed(2),
    maxMs: +ms[ms.length - 1].toFixed(2),
    cpuP50Ms: +pct(cpuMs, 50).toFixed(2),
    cpuP99Ms: +pct(cpuMs, 99).toFixed(2),
    evictionsPerSync: evicted / ITERATIONS,
  };
}

const cases = [
  await synchronizeCost('no threshold met', calm, false),
  await synchronizeCost(
    'memory pressure: rank 1000, evict 1',
    { ...calm, 'memory.available': { available: 50n * MI, capacity: 16n * GI } },
    false,
  ),
  await synchronizeCost(
    'disk pressure: reclaim, re-read, rank 1000, evict 1',
    { ...calm, 'nodefs.available': { available: 50n * GI, capacity: 1000n * GI } },
    false,
  ),
  await synchronizeCost('1000 emptyDir sizeLimits checked, none over', calm, true),
];
console.table(cases);

/** Crossing → eviction request, real clock, 1 s period, crossing at a random moment within the period. */
async function crossingToEviction(samples: number, periodMs: number) {
  const delays: number[] = [];
  for (let s = 0; s < samples; s++) {
    const stats = new FixedStats({ ...calm });
    let killedAt = 0;
    const ac = new AbortController();
    const m = manager(stats, () => (killedAt ||= performance.now()), periodMs);
    const done = m.start(ac.signal);
    await new Promise((r) => setTimeout(r, Math.random() * periodMs));
    stats.observations = { ...calm, 'memory.available': { available: 50n * MI, capacity: 16n * GI } };
    const crossedAt = performance.now();
    while (!killedAt) await new Promise((r) => setTimeout(r, 5));
    delays.push(killedAt - crossedAt);
    ac.abort();
    await done;
  }
  delays.sort((a, b) => a - b);
  return {
    periodMs,
    samples,
    p50Ms: Math.round(pct(delays, 50)),
    maxMs: Math.round(delays[delays.length - 1]),
    withinOnePeriod: delays.every((d) => d <= periodMs + 50),
  };
}
const latency = await crossingToEviction(15, 1000);
console.log('crossing → eviction request:', latency);

const results = { benchmark: 'eviction', pods: PODS, node: process.version, date: new Date().toISOString(), synchronize: cases, latency };
const dir = join(dirname(fileURLToPath(import.meta.url)), 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'eviction.json'), `${JSON.stringify(results, null, 2)}\n`);
const md = [
  '# Eviction manager (bench/eviction.bench.ts)',
  '',
  `${PODS} active pods, stats already measured (the worker pool's part is not in these figures); ${ITERATIONS} synchronizes per case, ${results.date}, Node ${process.version}, 2 shared CPUs.`,
  '',
  `Wall time includes preemption by whatever else runs on the machine (load average ${os.loadavg()[0].toFixed(1)} at the end); CPU time is the process's (user + system, GC threads included).`,
  '',
  '| case | wall p50 ms | wall p99 ms | wall max ms | CPU p50 ms | CPU p99 ms |',
  '|---|---|---|---|---|---|',
  ...cases.map((c) => `| ${c.name} | ${c.p50Ms} | ${c.p99Ms} | ${c.maxMs} | ${c.cpuP50Ms} | ${c.cpuP99Ms} |`),
  '',
  `Crossing → eviction request, ${latency.samples} crossings at random moments, monitoring period ${latency.periodMs} ms: p50 ${latency.p50Ms} ms, max ${latency.maxMs} ms (within one period: ${latency.withinOnePeriod}). The pod's grace period then runs in the pod worker.`,
  '',
];
writeFileSync(join(dir, 'eviction.md'), md.join('\n'));
console.log(`wrote ${join(dir, 'eviction.json')} and eviction.md`);
