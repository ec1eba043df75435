/**
 * Evented PLEG benchmark (`npm run bench -- evented-pleg`): event-to-status
 * latency of the evented PLEG (GetContainerEvents through the
 * container-events worker) against the generic PLEG's 1 s relist, on
 * kubelet-ts-sim in this process, with N running pods, measured in one run.
 *
 * For each mode: N pods (1 container each) run; the PLEG starts and caches
 * them all; then K times a running container is killed in the runtime
 * (sim control, at spread phases of the relist period) and the bench times
 * (a) until the pod's cache slot shows the container exited and (b) until the
 * ContainerDied event reaches the PLEG's sink (the syncLoop's queue in the
 * agent). Also counted: CRI calls the PLEG makes per second with nothing
 * changing (10 s idle).
 * Args: --pods 200 --kills 40 --threads 2
 * Writes bench/results/evented-pleg.{json,md}.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { realClock } from '../src/common/clock.js';
import { silentLogger } from '../src/common/logger.js';
import { CriClient } from '../src/cri/client.js';
import { WorkerContainerEventSource } from '../src/main/pleg/container-event-source.js';
import { EventedPleg } from '../src/main/pleg/evented-pleg.js';
import { GenericPleg } from '../src/main/pleg/generic-pleg.js';
import type { PodLifecycleEventGenerator } from '../src/main/pleg/pleg.js';
import { eventedPlegMetrics, plegMetrics } from '../src/main/pleg/pleg-metrics.js';
import type { PlegEvent } from '../src/runtime/pleg-event.js';
import { populate, type RawPod } from '../src/sim/populate.js';
import { startSimRuntime } from '../src/sim/server.js';
import { createSharedState } from '../src/shared/shared-state.js';
import { PoolRunner } from '../src/workers/task-runner.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';

const PODS = Number(arg('pods', '200'));
const KILLS = Number(arg('kills', '40'));
const THREADS = Number(arg('threads', '2'));
const IDLE_MS = 10_000;
type Mode = 'generic' | 'evented';

interface ModeResult {
  mode: Mode;
  statusMs: { mean: number; p50: number; p99: number; max: number };
  eventMs: { mean: number; p50: number; p99: number; max: number };
  idleCriCallsPerS: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stats = (xs: number[]) => ({
  mean: round(xs.reduce((a, b) => a + b, 0) / xs.length, 1),
  p50: round(percentile(xs, 50), 1),
  p99: round(percentile(xs, 99), 1),
  max: round(Math.max(...xs), 1),
});

async function runMode(mode: Mode): Promise<ModeResult> {
  const dir = mkdtempSync(join(tmpdir(), `kts-evbench-${mode}-`));
  const sim = await startSimRuntime({ listen: `unix://${join(dir, 'cri.sock')}` });
  const cri = new CriClient({ runtimeEndpoint: sim.endpoint, timeoutMs: 60_000 });
  const shared = createSharedState({ maxPods: PODS });
  const init = shared.workerInit(sim.endpoint, { timeoutMs: 60_000 });
  const runner = new PoolRunner(init, { threads: THREADS });
  const registry = new Registry();
  const metrics = plegMetrics(registry);
  const arrivals = new Map<string, number>();
  const sink = (e: PlegEvent) => {
    if (e.type === 'ContainerDied') arrivals.set(e.data, performance.now());
    return true;
  };
  const generic = new GenericPleg({
    runner,
    cache: shared.cache,
    records: shared.records,
    clock: realClock,
    logger: silentLogger(),
    metrics,
    sink,
  });
  const pleg: PodLifecycleEventGenerator =
    mode === 'generic'
      ? generic
      : new EventedPleg({
          generic,
          source: new WorkerContainerEventSource(init),
          eventedMetrics: eventedPlegMetrics(registry),
        });
  const stop = new AbortController();
  try {
    const pods: RawPod[] = await populate(cri, PODS, { containersPerPod: 1, prefix: `ev-${mode}` });
    const uids = pods.map((_, i) => `ev-${mode}-uid-${i}`);
    pleg.start(stop.signal);
    const cached = () => uids.every((u) => shared.cache.slotOf(u) !== undefined && shared.cache.read(shared.cache.slotOf(u)!, u));
    for (let i = 0; !cached(); i++) {
      if (i > 6000) throw new Error(`${mode}: pods not cached after 60 s`);
      await sleep(10);
    }
    if (mode === 'evented') {
      for (let i = 0; sim.control.stats().events.subscribers < 1; i++) {
        if (i > 3000) throw new Error('evented: no event stream after 30 s');
        await sleep(10);
      }
    }
    const callsBefore = Object.values(sim.control.stats().calls).reduce((a, b) => a + b, 0);
    await sleep(IDLE_MS);
    const idleCalls = Object.values(sim.control.stats().calls).reduce((a, b) => a + b, 0) - callsBefore;

    const statusMs: number[] = [];
    const eventMs: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await sleep((k * 137) % 1000); // spread the kills over the relist period
      const i = Math.floor((k * PODS) / KILLS);
      const uid = uids[i];
      const cid = pods[i].containerIds[0];
      const slot = shared.cache.slotOf(uid)!;
      const t0 = performance.now();
      sim.control.killContainer(cid, 1);
      let tStatus = 0;
      for (let n = 0; ; n++) {
        const now = performance.now();
        if (!tStatus && shared.cache.read(slot, uid)?.containerStatuses.find((c) => c.id === cid)?.state === 'exited') tStatus = now;
        if (tStatus && arrivals.has(cid)) break;
        if (now - t0 > 30_000) throw new Error(`${mode}: kill ${k} not seen after 30 s`);
        await sleep(1);
      }
      statusMs.push(tStatus - t0);
      eventMs.push(arrivals.get(cid)! - t0);
    }
    return { mode, statusMs: stats(statusMs), eventMs: stats(eventMs), idleCriCallsPerS: round(idleCalls / (IDLE_MS / 1000), 2) };
  } finally {
    stop.abort();
    await pleg.stopped();
    await runner.close();
    cri.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: ModeResult[] = [];
for (const mode of ['generic', 'evented'] as const) {
  console.log(`${mode}: ${PODS} pods, ${KILLS} container deaths`);
  results.push(await runMode(mode));
  console.log(JSON.stringify(results.at(-1)));
}
const [g, e] = results;
const meta: Record<string, unknown> = {
  ...machine(),
  pods: PODS,
  kills: KILLS,
  threads: THREADS,
  sim: 'in-process kubelet-ts-sim, no injected latency',
};
const md = [
  `# Evented PLEG: event-to-status latency vs the 1 s relist`,
  '',
  `${PODS} running pods (1 container each) on kubelet-ts-sim in the bench process, ${THREADS} pool threads, ${KILLS} container deaths per mode`,
  `at spread phases of the relist period; one run, ${String(meta.date)}, load average ${JSON.stringify(meta.loadavg)} (shared, noisy 2-core machine).`,
  '',
  '| mode | death → status cached, mean / p50 / p99 / max (ms) | death → ContainerDied delivered, mean / p50 / p99 / max (ms) | idle CRI calls/s |',
  '|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.mode} | ${r.statusMs.mean} / ${r.statusMs.p50} / ${r.statusMs.p99} / ${r.statusMs.max} | ${r.eventMs.mean} / ${r.eventMs.p50} / ${r.eventMs.p99} / ${r.eventMs.max} | ${r.idleCriCallsPerS} |`,
  ),
  '',
  `Ratio evented / generic, mean death → status: ${round(e.statusMs.mean / g.statusMs.mean, 3)}; p99: ${round(e.statusMs.p99 / g.statusMs.p99, 3)}.`,
  '',
].join('\n');
writeResults('evented-pleg', { ...meta, results }, md);
