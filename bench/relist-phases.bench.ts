/**
 * Steady relist breakdown (`npm run bench -- relist-phases`): where a relist
 * with nothing changed spends its time, from the PLEG's own
 * kubelet_pleg_relist_duration_seconds and kubelet_ts_pleg_relist_phase_seconds,
 * and how many pool tasks and CRI calls it costs. kubelet-ts-sim runs in a
 * child process with the per-call latency calibrated on containerd (see the
 * pleg benchmark); N pods with 1 container each; the generic PLEG on a pool
 * of --threads workers; one relist every --period ms (default 100), as in the
 * agent but faster, for --relists relists after a warm-up.
 * Args: --pods 250 --relists 200 --threads 2 --period 100 --sim-latency SPEC --out NAME
 * Writes bench/results/<out>.{json,md} (default relist-phases).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { realClock } from '../src/common/clock.js';
import { silentLogger } from '../src/common/logger.js';
import { CriClient } from '../src/cri/client.js';
import { GenericPleg } from '../src/main/pleg/generic-pleg.js';
import { plegMetrics } from '../src/main/pleg/pleg-metrics.js';
import { populate } from '../src/sim/populate.js';
import { createSharedState } from '../src/shared/shared-state.js';
import { PoolRunner, type RelistLoopConnection, type TaskRunner } from '../src/workers/task-runner.js';
import type { TaskResults, TaskType, RequestOf } from '../src/workers/protocol/protocol.js';
import { histograms, parseProm } from './lib/prom.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';
import { startSimProcess } from './lib/sim-process.js';

const PODS = Number(arg('pods', '250'));
const RELISTS = Number(arg('relists', '200'));
const THREADS = Number(arg('threads', '2'));
const PERIOD_MS = Number(arg('period', '100'));
const SIM_LATENCY = arg('sim-latency', 'lognormal:0.7:5');
const OUT = arg('out', 'relist-phases');
const LABEL = arg('label', 'current');

/** Counts the tasks a relist sends to the pool. */
class CountingRunner implements TaskRunner {
  tasks = 0;
  constructor(private readonly inner: TaskRunner) {}
  get threads(): number {
    return this.inner.threads;
  }
  run<K extends TaskType>(request: RequestOf<K>): Promise<TaskResults[K]> {
    this.tasks++;
    return this.inner.run(request);
  }
  relistLoop(): RelistLoopConnection {
    return this.inner.relistLoop();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'kts-relist-phases-'));
const sim = await startSimProcess(dir, SIM_LATENCY);
const cri = new CriClient({ runtimeEndpoint: sim.endpoint, timeoutMs: 60_000 });
const shared = createSharedState({ maxPods: PODS });
const runner = new CountingRunner(new PoolRunner(shared.workerInit(sim.endpoint, { timeoutMs: 60_000 }), { threads: THREADS }));
try {
  await populate(cri, PODS, { containersPerPod: 1, prefix: 'phases' });
  const warm = new GenericPleg({
    runner,
    cache: shared.cache,
    records: shared.records,
    clock: realClock,
    logger: silentLogger(),
    metrics: plegMetrics(new Registry()),
    sink: () => true,
  });
  for (let i = 0; i < 5; i++) await warm.relist();
  const measuredRegistry = new Registry();
  const final = new GenericPleg({
    runner,
    cache: shared.cache,
    records: shared.records,
    clock: realClock,
    logger: silentLogger(),
    metrics: plegMetrics(measuredRegistry),
    sink: () => true,
  });
  await final.relist();
  const tasksBefore = runner.tasks;
  const started = performance.now();
  const durations: number[] = [];
  for (let i = 0; i < RELISTS; i++) {
    const t0 = performance.now();
    await final.relist();
    durations.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, PERIOD_MS));
  }
  const wallS = (performance.now() - started) / 1000;
  const samples = parseProm(await measuredRegistry.metrics());
  const total = {
    meanMs: round(durations.reduce((a, b) => a + b, 0) / durations.length, 3),
    p50Ms: round(percentile(durations, 50), 3),
    p99Ms: round(percentile(durations, 99), 3),
  };
  const phases = histograms(samples, 'kubelet_ts_pleg_relist_phase_seconds', 'phase');
  // What the agent reports: the relist as the PLEG times it (a quiet relist ends in the worker).
  const metric = histograms(samples, 'kubelet_pleg_relist_duration_seconds', 'none')[''];
  const result = {
    label: LABEL,
    pods: PODS,
    relists: RELISTS,
    tasksPerRelist: round((runner.tasks - tasksBefore) / RELISTS, 2),
    relist: total,
    metric,
    phases,
    wallS: round(wallS, 1),
  };
  const meta: Record<string, unknown> = { ...machine(), threads: THREADS, simLatency: SIM_LATENCY, periodMs: PERIOD_MS };
  console.log(JSON.stringify(result));
  const md = [
    `# Steady relist breakdown (${LABEL})`,
    '',
    `${PODS} pods × 1 container on kubelet-ts-sim (child process, per-call latency ${SIM_LATENCY}), ${THREADS} pool threads,`,
    `${RELISTS} relists with nothing changed, one every ${PERIOD_MS} ms; ${String(meta.date)}, load ${JSON.stringify(meta.loadavg)} (shared, noisy 2-core machine).`,
    '',
    `Relist as kubelet_pleg_relist_duration_seconds times it: mean ${metric?.meanMs} ms, p99 ${metric?.p99Ms} (interpolated in upstream's buckets), ${metric?.count} relists.`,
    '',
    `Wall time of a forced relist (GenericPleg.relist() on the calling thread, including its round trip to the relist's thread): mean ${total.meanMs} ms, p50 ${total.p50Ms}, p99 ${total.p99Ms}; pool tasks per relist ${result.tasksPerRelist}.`,
    '',
    '| phase (kubelet_ts_pleg_relist_phase_seconds) | count | mean (ms) | p50 (bucket-interpolated) | p99 (bucket-interpolated) |',
    '|---|---:|---:|---:|---:|',
    ...Object.entries(phases).map(([k, h]) => `| ${k} | ${h.count} | ${h.meanMs} | ${h.p50Ms} | ${h.p99Ms} |`),
    '',
  ].join('\n');
  writeResults(OUT, { ...meta, result }, md);
} finally {
  await runner.close();
  cri.close();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}
