/**
 * PLEG benchmark (`npm run bench -- pleg`): the generic PLEG against
 * kubelet-ts-sim running in a child process, at 100/1000/5000 pods with 2
 * containers each, measured in one run:
 * - raw: the two List calls a relist makes (ListPodSandbox ‖ ListContainers,
 *   decoded) straight from this thread: the floor a relist cannot beat;
 * - relist duration for parallel (pool), serial (pool, one inspection at a
 *   time, upstream's algorithm) and inline (--worker-threads=0) modes, at
 *   steady state and with 10% / 100% of pods churned between relists
 *   (each churned pod gets a new running container and loses its old one);
 * - the main thread's event-loop delay p99 during each scenario.
 * Writes bench/results/pleg.{json,md} (or --out NAME) and, for the default name, the charts
 * pleg-relist-p99.svg and pleg-churn.svg. Run with --expose-gc (npm run bench does) so
 * the load generator's garbage is collected before each measured relist.
 * Args: --sizes 100,1000,5000 --churn-sizes 500,1000 --steady 30 --churn-relists 8 --threads N
 *       --sim-latency SPEC (default lognormal:0.7:5, i.e. median 0.7 ms / p99 5 ms per CRI call,
 *       calibrated on containerd 1.6 here: ContainerStatus/PodSandboxStatus/filtered lists measured
 *       p50 0.64–0.72 ms, p99 1.5–5.2 ms; `none` for a zero-latency sim)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LagProbe } from './lib/lag.js';
import { startSimProcess } from './lib/sim-process.js';
import { Registry } from 'prom-client';
import { realClock } from '../src/common/clock.js';
import { silentLogger } from '../src/common/logger.js';
import { CriClient } from '../src/cri/client.js';
import { GenericPleg } from '../src/main/pleg/generic-pleg.js';
import { plegMetrics } from '../src/main/pleg/pleg-metrics.js';
import { populate, SIM_BUSYBOX_IMAGE, type RawPod } from '../src/sim/populate.js';
import { createSharedState } from '../src/shared/shared-state.js';
import { InlineRunner, PoolRunner, type TaskRunner } from '../src/workers/task-runner.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';
import { plegChartSetup, writePlegCharts } from './lib/charts.js';
import { LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from '../src/runtime/types.js';

const SIZES = arg('sizes', '100,1000,5000').split(',').map(Number);
const CHURN_SIZES = arg('churn-sizes', '500,1000').split(',').map(Number);
const STEADY = Number(arg('steady', '30'));
const CHURN_RELISTS = Number(arg('churn-relists', '8'));
const THREADS = Number(arg('threads', String(Math.min(4, availableParallelism()))));
const SIM_LATENCY = arg('sim-latency', 'lognormal:0.7:5');
const OUT = arg('out', 'pleg');
const MODES = ['parallel', 'serial', 'inline'] as const;
type Mode = (typeof MODES)[number];

interface Row {
  pods: number;
  scenario: string;
  mode: Mode | 'raw-list';
  p50Ms: number;
  p99Ms: number;
  loopLagP99Ms: number;
  samples: number;
}

async function measure(samples: number, before: (() => Promise<void>) | undefined, op: () => Promise<void>) {
  const lag = new LagProbe();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (before) {
      await before();
      // The load generator's own garbage (its CRI calls) is not the agent's: collect it first.
      (globalThis as { gc?: () => void }).gc?.();
    }
    lag.start();
    const t = performance.now();
    await op();
    times.push(performance.now() - t);
    lag.stop();
  }
  return { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)), loopLagP99Ms: round(lag.percentileMs(99)), samples };
}

let attempt = 0;

/** Replaces the first container of each chosen pod: a new running container, the old one removed. */
async function churn(cri: CriClient, pods: RawPod[], fraction: number, round_: number, uids: string[]): Promise<void> {
  const thisAttempt = ++attempt;
  const n = Math.max(1, Math.round(pods.length * fraction));
  const start = (round_ * n) % pods.length;
  const chosen = Array.from({ length: n }, (_, i) => (start + i) % pods.length);
  let next = 0;
  const lane = async () => {
    while (next < chosen.length) {
      const i = chosen[next++];
      const pod = pods[i];
      const labels = {
        [LABEL_POD_UID]: uids[i],
        [LABEL_POD_NAME]: uids[i],
        [LABEL_POD_NAMESPACE]: 'default',
        [LABEL_CONTAINER_NAME]: 'c0',
      };
      const { containerId } = await cri.createContainer({
        podSandboxId: pod.sandboxId,
        config: {
          metadata: { name: 'c0', attempt: thisAttempt },
          image: { image: SIM_BUSYBOX_IMAGE },
          command: ['sleep', 'infinity'],
          labels,
        },
        sandboxConfig: { metadata: { name: uids[i], namespace: 'default', uid: uids[i] } },
      });
      await cri.startContainer({ containerId });
      await cri.removeContainer({ containerId: pod.containerIds[0] });
      pod.containerIds[0] = containerId;
    }
  };
  await Promise.all(Array.from({ length: 32 }, lane));
}

function makePleg(mode: Mode, endpoint: string, maxPods: number): { pleg: GenericPleg; runner: TaskRunner } {
  const shared = createSharedState({ maxPods, slotBytes: 4096 });
  const init = shared.workerInit(endpoint, { timeoutMs: 120_000 });
  const runner: TaskRunner = mode === 'inline' ? new InlineRunner(init) : new PoolRunner(init, { threads: THREADS });
  const pleg = new GenericPleg({
    runner,
    cache: shared.cache,
    records: shared.records,
    clock: realClock,
    logger: silentLogger(),
    metrics: plegMetrics(new Registry()),
    mode: mode === 'serial' ? 'serial' : 'parallel',
    channelCapacity: 1_000_000,
  });
  return { pleg, runner };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kts-bench-'));
  const sim = await startSimProcess(dir, SIM_LATENCY);
  const cri = new CriClient({ runtimeEndpoint: sim.endpoint, timeoutMs: 120_000 });
  const rows: Row[] = [];
  let pods: RawPod[] = [];
  const uids: string[] = [];
  const sizes = [...new Set([...SIZES, ...CHURN_SIZES])].sort((a, b) => a - b);
  try {
    for (const size of sizes) {
      const more = await populate(cri, size - pods.length, { prefix: `bench-${pods.length}` });
      for (let i = 0; i < more.length; i++) uids.push(`bench-${pods.length}-uid-${i}`);
      pods = pods.concat(more);
      console.log(`populated ${pods.length} pods`);
      if (SIZES.includes(size)) {
        rows.push({
          pods: size,
          scenario: 'steady',
          mode: 'raw-list',
          ...(await measure(STEADY, undefined, async () => {
            await Promise.all([cri.listPodSandbox({}), cri.listContainers({})]);
          })),
        });
      }
      for (const mode of MODES) {
        const { pleg, runner } = makePleg(mode, sim.endpoint, Math.max(size, 110));
        await pleg.relist(); // first relist inspects every pod; not measured
        pleg.events.drain();
        if (SIZES.includes(size)) {
          rows.push({ pods: size, scenario: 'steady', mode, ...(await measure(STEADY, undefined, () => pleg.relist())) });
        }
        if (CHURN_SIZES.includes(size)) {
          for (const fraction of [0.1, 1]) {
            let r = 0;
            rows.push({
              pods: size,
              scenario: `churn ${fraction * 100}%`,
              mode,
              ...(await measure(
                CHURN_RELISTS,
                () => churn(cri, pods, fraction, r++, uids),
                async () => {
                  await pleg.relist();
                  pleg.events.drain();
                },
              )),
            });
          }
        }
        await runner.close();
        console.log(JSON.stringify(rows.filter((x) => x.pods === size && x.mode === mode)));
      }
    }
  } finally {
    cri.close();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const get = (pods: number, scenario: string, mode: string) =>
    rows.find((r) => r.pods === pods && r.scenario === scenario && r.mode === mode);
  const ratios: Record<string, number | null> = {};
  const steady1k = get(1000, 'steady', 'parallel');
  const raw1k = get(1000, 'steady', 'raw-list');
  if (steady1k && raw1k) ratios['steady relist p99 / raw list p99 @1000 pods (target <= 1.3)'] = round(steady1k.p99Ms / raw1k.p99Ms);
  const par500 = get(500, 'churn 100%', 'parallel');
  const ser500 = get(500, 'churn 100%', 'serial');
  if (par500 && ser500) ratios['serial / parallel relist p50 @500 pods, 100% churn (target >= 5)'] = round(ser500.p50Ms / par500.p50Ms);
  const lags1k = rows.filter((r) => r.pods === 1000 && r.mode === 'parallel').map((r) => r.loopLagP99Ms);
  if (lags1k.length) ratios['max event-loop lag p99 @1000 pods, parallel (ms, target <= 10)'] = Math.max(...lags1k);
  const p5k = get(5000, 'steady', 'parallel');
  if (p5k) ratios['steady relist p99 @5000 pods, parallel (ms, target < 100)'] = p5k.p99Ms;

  const md = [
    '# PLEG benchmark',
    '',
    `Simulated runtime in a child process with per-call latency ${SIM_LATENCY}; ${THREADS} worker threads; 2 containers per pod. ${JSON.stringify(machine())}`,
    '',
    '| pods | scenario | mode | relist p50 ms | relist p99 ms | event-loop lag p99 ms | samples |',
    '|---:|---|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.pods} | ${r.scenario} | ${r.mode} | ${r.p50Ms} | ${r.p99Ms} | ${r.loopLagP99Ms} | ${r.samples} |`),
    '',
    '## Against the targets (same run)',
    '',
    ...Object.entries(ratios).map(([k, v]) => `- ${k}: **${v}**`),
  ].join('\n');
  writeResults(OUT, { machine: machine(), threads: THREADS, simLatency: SIM_LATENCY, rows, ratios }, md);
  if (OUT === 'pleg') writePlegCharts(rows, plegChartSetup(THREADS, SIM_LATENCY, machine()));
  console.log(md);
}

await main();
