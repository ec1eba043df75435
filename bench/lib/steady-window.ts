/**
 * What the peer and steady benchmarks measure over a window with N pods up:
 * an agent's relist duration, CRI calls and CPU from two /metrics scrapes
 * (windowStats), the relist's two list calls made alone over CRI
 * (steadyLists, the floor), and the convergence both benches wait on
 * (waitConverged: CRI and an agent's /pods).
 */
import { performance } from 'node:perf_hooks';
import type { Pod } from '../../src/api/pod.js';
import type { CriClient } from '../../src/cri/client.js';
import { compareSources, type HistStats } from '../../src/compare/summary.js';
import { DEF_BUCKETS } from '../../src/common/buckets.js';
import { histogramQuantile } from '../../src/common/histogram-math.js';
import { ContainerState } from '../../src/gen/runtime/v1/api.js';
import { LABEL_POD_NAME, LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { relistPhases, type RelistPhases } from './relist-phases.js';
import type { PeerAgent } from './peer-agents.js';
import { log, percentile, round } from './report.js';

export interface WindowStats {
  windowS: number;
  relistCount: number;
  relistMeanMs: number;
  relistP50Ms: number;
  relistP99Ms: number;
  relistIntervalMeanMs: number;
  /** CRI calls in the window by operation type (non-zero only). */
  runtimeCalls: Record<string, number>;
  cpuCores: number;
  /** kubelet-ts only: kubelet_ts_pleg_relist_phase_seconds over the window, by phase. */
  relistPhases?: RelistPhases;
}

/**
 * The two calls a relist makes (ListPodSandbox and ListContainers, unfiltered),
 * timed on their own once a second over the steady window: even seconds both
 * at once (as kubelet-ts's relist makes them), odd seconds one after the other
 * (as the Go kubelet v1.20.2's GenericPLEG does).
 */
export interface SteadyLists {
  samples: number;
  concurrentMeanMs: number;
  concurrentP99Ms: number;
  /** The same p99 interpolated in upstream's buckets, as the agents' relist p99 is. */
  concurrentBucketP99Ms?: number;
  serialMeanMs: number;
  serialP99Ms: number;
}

const ms = (s: number) => round(s * 1000, 2);

export function windowStats(start: { text: string; timeMs: number }, end: { text: string; timeMs: number }, cpuS: number): WindowStats {
  const [s] = compareSources([{ name: 'x', origin: 'x', start, end }]).sources;
  const d: HistStats | null = s.relistDuration;
  const calls: Record<string, number> = {};
  for (const [op, h] of Object.entries(s.runtimeOps)) if (h.count > 0) calls[op] = h.count;
  const windowS = (end.timeMs - start.timeMs) / 1000;
  return {
    windowS: round(windowS, 1),
    relistCount: d?.count ?? 0,
    relistMeanMs: d ? ms(d.meanS) : Number.NaN,
    relistP50Ms: d ? ms(d.p50S) : Number.NaN,
    relistP99Ms: d ? ms(d.p99S) : Number.NaN,
    relistIntervalMeanMs: s.relistInterval ? ms(s.relistInterval.meanS) : Number.NaN,
    runtimeCalls: calls,
    cpuCores: round(cpuS / windowS, 3),
    relistPhases: relistPhases(start.text, end.text),
  };
}

/** One /metrics scrape with the wall-clock time it returned. */
export async function scrapeMetrics(agent: { metrics(): Promise<string> }): Promise<{ text: string; timeMs: number }> {
  const text = await agent.metrics();
  return { text, timeMs: Date.now() };
}

/** Pods of the namespace whose name starts with `gen-` that run a container, and those of other generations. */
export async function runningByGeneration(cri: CriClient, namespace: string, gen: string): Promise<{ mine: number; others: number }> {
  const r = await cri.listContainers({
    filter: { labelSelector: { [LABEL_POD_NAMESPACE]: namespace }, state: { state: ContainerState.CONTAINER_RUNNING } },
  });
  const mine = new Set<string>();
  let others = 0;
  for (const c of r.containers) {
    const name = c.labels[LABEL_POD_NAME] ?? '';
    if (name.startsWith(`${gen}-`)) mine.add(name);
    else others++;
  }
  return { mine: mine.size, others };
}

/** Pods of the namespace whose name starts with `gen-` that are Running with every container running in /pods. */
export function reportedRunning(pods: Pod[], namespace: string, gen: string): number {
  let n = 0;
  for (const p of pods) {
    if (p.metadata.namespace !== namespace || !p.metadata.name?.startsWith(`${gen}-`)) continue;
    const cs = p.status?.containerStatuses ?? [];
    if (p.status?.phase === 'Running' && cs.length > 0 && cs.every((c) => c.state?.running !== undefined)) n++;
  }
  return n;
}

/** The p99 of these durations (ms) as Prometheus interpolates it in upstream's DefBuckets. */
function bucketP99(ms: number[]): number {
  const buckets = [...DEF_BUCKETS, Infinity].map((le) => ({ le, count: ms.filter((x) => x / 1000 <= le).length }));
  return histogramQuantile(0.99, buckets) * 1000;
}

/** The relist's two list calls, timed over `seconds`, alternating concurrent and serial each second. */
export async function steadyLists(cri: CriClient, seconds: number): Promise<SteadyLists> {
  const concurrent: number[] = [];
  const serial: number[] = [];
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const t = performance.now();
    if (i % 2 === 0) {
      await Promise.all([cri.listPodSandbox({}), cri.listContainers({})]);
      concurrent.push(performance.now() - t);
    } else {
      await cri.listPodSandbox({});
      await cri.listContainers({});
      serial.push(performance.now() - t);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - t))));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
  return {
    samples: concurrent.length + serial.length,
    concurrentMeanMs: round(mean(concurrent), 2),
    concurrentP99Ms: round(percentile(concurrent, 99), 2),
    concurrentBucketP99Ms: round(bucketP99(concurrent), 2),
    serialMeanMs: round(mean(serial), 2),
    serialP99Ms: round(percentile(serial, 99), 2),
  };
}

/** What waitConverged watches: an agent (CRI and its /pods), or a raw run (CRI only, stopped by `signal` when its work fails). */
export type Watched = { kind: string; namespace: string } & ({ agent: Pick<PeerAgent, 'pods' | 'tail'> } | { signal: AbortSignal });

export interface Converged {
  runtimeMs: number;
  reportedMs: number;
  bothMs: number;
}

/**
 * Polls CRI (every 250 ms) and the agent's /pods (every 500 ms) from t0 until
 * both show `gen`'s n pods running (and, with `noOthers`, no other running
 * container in the namespace). Without an agent, reported is the instant CRI
 * converged. Times are ms from t0; past `timeoutMs` it throws.
 */
export async function waitConverged(
  cri: CriClient,
  w: Watched,
  n: number,
  gen: string,
  t0: number,
  noOthers: boolean,
  timeoutMs: number,
): Promise<Converged> {
  let runtimeMs = Number.NaN;
  let reportedMs = Number.NaN;
  let lastLog = t0;
  let reportedOk = false;
  for (let i = 0; ; i++) {
    if ('signal' in w) w.signal.throwIfAborted();
    const now = performance.now();
    const r = await runningByGeneration(cri, w.namespace, gen);
    const runtimeOk = r.mine === n && (!noOthers || r.others === 0);
    if (runtimeOk && Number.isNaN(runtimeMs)) runtimeMs = performance.now() - t0;
    let rep = -1;
    if (!('agent' in w)) {
      reportedOk = runtimeOk;
      if (runtimeOk) reportedMs = runtimeMs;
    } else if (i % 2 === 0 || runtimeOk) {
      rep = reportedRunning(await w.agent.pods().catch(() => []), w.namespace, gen);
      reportedOk = rep === n;
      if (reportedOk && Number.isNaN(reportedMs)) reportedMs = performance.now() - t0;
    }
    if (runtimeOk && reportedOk) return { runtimeMs, reportedMs, bothMs: performance.now() - t0 };
    if (now - lastLog > 10_000) {
      lastLog = now;
      log(
        `    ${w.kind}: ${r.mine}/${n} running (${r.others} others), ${rep >= 0 ? rep : '?'}/${n} reported at ${round((now - t0) / 1000, 3)} s`,
      );
    }
    if (now - t0 > timeoutMs) {
      const tail = 'agent' in w ? `:\n${w.agent.tail(40)}` : '';
      throw new Error(`${w.kind}: not converged after ${timeoutMs} ms (${r.mine}/${n} running, ${r.others} others)${tail}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
