/**
 * Soak (`npm run soak -- --minutes 30`, i.e. `npm run bench -- soak`): one
 * agent process on the embedded simulated runtime with --pods static pods, one
 * in ten crash-looping (`sh -c 'echo …; sleep 2; exit 1'`, restartPolicy
 * Always, so the agent's CrashLoopBackOff paces it), for --minutes. Every
 * --every-s seconds it samples the agent: RSS and open descriptors (/proc), the
 * main-thread heap and the event-loop lag of the window since the previous
 * sample (prom-client's default metrics on the read-only /metrics; the
 * driver is their only scraper, so each window is its own), the restarts of
 * the crash-looping containers (/pods) and the bytes the agent has logged.
 *
 * After --warmup-min it judges the samples against the bound of
 * bench/lib/soak-stats.ts and, at the end, checks the fault suite's
 * invariants on the long-running pods (test/faults/invariants.ts: nothing
 * lost, no duplicate, no healthy container restarted since the end of the
 * warm-up, /pods agrees with the runtime) and, on the crash-looping ones, no
 * duplicate and a restart count that upstream's back-off allows.
 *
 * bench/heap-soak.bench.ts is the demo node's (6 pods) quiet soak; this is the
 * loaded one. Writes bench/results/soak.{json,md} (or --out NAME).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../src/api/pod.js';
import { podManifest } from '../test/e2e/agent-harness.js';
import { baselineOf, checkRuntime, checkStatuses, restartsInPods, type Baseline } from '../test/faults/invariants.js';
import { NodeUnderTest } from '../test/faults/node-under-test.js';
import { procUsage } from '../test/faults/proc-usage.js';
import type { RuntimeView } from '../test/faults/runtime-view.js';
import type { Workload } from '../test/faults/workload.js';
import { parseProm } from './lib/prom.js';
import { arg, machine, round, writeResults } from './lib/report.js';
import { crashLoopRestarts, DEFAULT_SOAK_BOUND, judgeSoak, type SoakSample } from './lib/soak-stats.js';
import { renderSoak, type CrashLoopCheck, type SoakResult } from './lib/soak-report.js';

const MINUTES = Number(arg('minutes', '30'));
const EVERY_S = Number(arg('every-s', '10'));
const WARMUP_MIN = Number(arg('warmup-min', '5'));
const PODS = Number(arg('pods', '500'));
const CRASH_EVERY = Number(arg('crash-every', '10'));
const VERBOSITY = arg('v', '2');
const OUT = arg('out', 'soak');
const MiB = 1024 * 1024;
/** A crash-looping container runs this long each time. */
const CRASH_RUN_S = 2;
/** Slack for the least restarts: each restart may come one pod-worker retry (10 s ± jitter) and a relist late. */
const RESTART_LATE_S = 30;

if (WARMUP_MIN * 60 + 2 * EVERY_S > MINUTES * 60)
  throw new Error(`--minutes ${MINUTES} leaves nothing after a ${WARMUP_MIN}-minute warm-up`);

const namespace = 'soak';
const nodeName = 'soak-node';
const names = Array.from({ length: PODS }, (_, i) => `p${String(i).padStart(4, '0')}`);
const crashing = names.filter((_, i) => i % CRASH_EVERY === CRASH_EVERY - 1);
const long: Workload = {
  namespace,
  pods: names
    .filter((n) => !crashing.includes(n))
    .map((name, i) => ({ name, kind: 'long' as const, containers: i % 10 === 0 ? ['main', 'side'] : ['main'] })),
};

// The node writes no manifest of its own (an empty workload): the soak's pods are written below.
const node = new NodeUnderTest({ endpoint: 'sim', nodeName, workload: { namespace, pods: [] } });
node.agent.extraArgs.push(`--max-pods=${PODS + 50}`, `--v=${VERBOSITY}`);
for (const p of long.pods)
  node.agent.writeManifest(
    p.name,
    podManifest(
      p.name,
      namespace,
      p.containers.map((name) => ({ name, command: ['sleep', 'infinity'] })),
      { grace: 1 },
    ),
  );
for (const name of crashing)
  node.agent.writeManifest(
    name,
    podManifest(name, namespace, [{ name: 'crash', command: ['sh', '-c', `echo crash-looping; sleep ${CRASH_RUN_S}; exit 1`] }], {
      grace: 1,
    }),
  );

/**
 * The runtime's view, read again when a container listed is removed before its status is read
 * (the agent's container GC removes the crash-looping pods' dead containers).
 */
const runtimeView = () => node.agent.until('a view of the runtime', () => node.runtimeView(), 60_000);

const full = (n: string) => `${n}-${nodeName}`;
const crashingFull = new Set(crashing.map(full));
/** The runtime's view without the crash-looping pods, for the invariants of long-running pods. */
const longOnly = (v: RuntimeView): RuntimeView => ({
  sandboxes: v.sandboxes.filter((s) => !crashingFull.has(s.pod)),
  containers: v.containers.filter((c) => !crashingFull.has(c.pod)),
});

let loggedBytes = 0;
let countedLines = 0;
function logBytes(): number {
  const logs = node.agent.logs;
  for (; countedLines < logs.length; countedLines++) loggedBytes += Buffer.byteLength(logs[countedLines]) + 1;
  return loggedBytes;
}

async function scrape(): Promise<{ heapMiB: number; lagP99Ms: number; lagMaxMs: number }> {
  const samples = parseProm(await (await fetch(node.agent.metricsUrl)).text());
  const value = (name: string) => {
    const s = samples.find((x) => x.name === name);
    if (!s) throw new Error(`no ${name} in the agent's /metrics`);
    return s.value;
  };
  return {
    heapMiB: value('nodejs_heap_size_used_bytes') / MiB,
    lagP99Ms: value('nodejs_eventloop_lag_p99_seconds') * 1000,
    lagMaxMs: value('nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

const restartsOf = (pods: Pod[]) =>
  pods
    .filter((p) => crashingFull.has(p.metadata?.name ?? ''))
    .reduce((s, p) => s + (p.status?.containerStatuses?.[0]?.restartCount ?? 0), 0);
const runningLong = (pods: Pod[]) => pods.filter((p) => !crashingFull.has(p.metadata?.name ?? '') && p.status?.phase === 'Running').length;

function simRssMiB(): number | undefined {
  try {
    const pid = Number(readFileSync(join(node.agent.dir, 'root/sim/sim.pid'), 'utf8').trim());
    const u = procUsage(pid);
    return u ? u.rssBytes / MiB : undefined;
  } catch {
    return undefined;
  }
}

interface Row extends SoakSample {
  crashRestarts: number;
  longRunning: number;
  simRssMiB?: number;
}

function crashLoopChecks(pods: Pod[], view: RuntimeView, now: number): CrashLoopCheck {
  const byName = new Map(pods.map((p) => [p.metadata?.name ?? '', p]));
  const c: CrashLoopCheck = {
    pods: crashing.length,
    restartsTotal: 0,
    outOfBounds: [],
    duplicates: [],
    maxExitedKept: 0,
    minRestarts: Infinity,
    maxRestarts: 0,
  };
  for (const n of crashing) {
    const p = byName.get(full(n));
    const cs = p?.status?.containerStatuses?.[0];
    const started = p?.status?.startTime ? Date.parse(p.status.startTime) : NaN;
    if (!p || !cs || Number.isNaN(started)) {
      c.outOfBounds.push(`${full(n)}: no status with a start time in /pods`);
      continue;
    }
    const elapsedS = (now - started) / 1000;
    // startTime is set before the sandbox exists, so the most restarts counts from it (rounded down to a second) plus 1 s.
    const most = crashLoopRestarts(elapsedS + 1, CRASH_RUN_S);
    const least = crashLoopRestarts(elapsedS - 120, CRASH_RUN_S, RESTART_LATE_S);
    const r = cs.restartCount;
    c.restartsTotal += r;
    c.minRestarts = Math.min(c.minRestarts, r);
    c.maxRestarts = Math.max(c.maxRestarts, r);
    if (r > most || r < least)
      c.outOfBounds.push(`${full(n)}: ${r} restarts in ${Math.round(elapsedS)} s, upstream's back-off allows ${least}–${most}`);
    const boxes = view.sandboxes.filter((s) => s.pod === full(n) && s.ready).length;
    const running = view.containers.filter((x) => x.pod === full(n) && x.running).length;
    if (boxes > 1 || running > 1) c.duplicates.push(`${full(n)}: ${boxes} ready sandboxes, ${running} running containers`);
    c.maxExitedKept = Math.max(c.maxExitedKept, view.containers.filter((x) => x.pod === full(n) && x.state === 'exited').length);
  }
  return c;
}

// Stopped early: stop the agent and its sim, remove the directory, and exit without results.
for (const [sig, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.on(sig, () => {
    node.close().then(
      () => process.exit(code),
      () => process.exit(code),
    );
  });

const rows: Row[] = [];
let baseline: Baseline | undefined;
let end: SoakResult['end'] | undefined;
let allRunningAtS: number | undefined;
try {
  await node.start();
  const t0 = Date.now();
  const pid = node.agent.pid!;
  // /healthz answers before the read-only server (/metrics, /pods) listens.
  await node.agent.until('the read-only server', () => scrape().then(() => node.pods()), 120_000);
  console.log(
    `agent ${pid} up; ${long.pods.length} long-running and ${crashing.length} crash-looping pods; sampling every ${EVERY_S} s for ${MINUTES} min`,
  );
  for (let k = 0; ; k++) {
    const due = t0 + k * EVERY_S * 1000;
    if (due > t0 + MINUTES * 60_000) break;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    const t = (Date.now() - t0) / 1000;
    const usage = procUsage(pid);
    if (!usage) throw new Error(`the agent (pid ${pid}) is gone at ${t} s:\n${node.agent.tail()}`);
    const [m, pods] = await Promise.all([scrape(), node.pods()]);
    const row: Row = {
      t: round(t, 1),
      rssMiB: round(usage.rssBytes / MiB, 1),
      fds: usage.fds,
      heapMiB: round(m.heapMiB, 1),
      lagP99Ms: round(m.lagP99Ms, 2),
      lagMaxMs: round(m.lagMaxMs, 2),
      logBytes: logBytes(),
      crashRestarts: restartsOf(pods),
      longRunning: runningLong(pods),
      simRssMiB: round(simRssMiB() ?? NaN, 1),
    };
    rows.push(row);
    if (allRunningAtS === undefined && row.longRunning === long.pods.length) allRunningAtS = row.t;
    if (!baseline && t >= WARMUP_MIN * 60) {
      if (allRunningAtS === undefined)
        throw new Error(`only ${row.longRunning}/${long.pods.length} long-running pods Running after the warm-up`);
      baseline = baselineOf(longOnly(await runtimeView()));
    }
    if (k % 6 === 0)
      console.log(
        `${Math.round(t)} s: RSS ${row.rssMiB} MiB, heap ${row.heapMiB} MiB, fds ${row.fds}, lag p99 ${row.lagP99Ms} ms, ` +
          `running ${row.longRunning}/${long.pods.length}, crash restarts ${row.crashRestarts}, log ${Math.round(row.logBytes / 1024)} KiB`,
      );
  }
  const [view, pods] = await Promise.all([runtimeView(), node.pods()]);
  const v = checkRuntime(long, nodeName, longOnly(view), baseline);
  const statuses = checkStatuses(long, nodeName, longOnly(view), pods);
  const restarts = restartsInPods(long, nodeName, longOnly(view), pods);
  end = {
    lost: v.lost,
    duplicates: [...v.duplicateSandboxes, ...v.duplicateContainers],
    healthyRestarted: [...v.healthyRestarted, ...restarts.restarted],
    startsInterrupted: [...v.startsInterrupted, ...restarts.bumped],
    statusDisagreements: statuses,
    crashLoop: crashLoopChecks(pods, view, Date.now()),
  };
} finally {
  await node.close();
}

const verdict = judgeSoak(rows, WARMUP_MIN * 60, DEFAULT_SOAK_BOUND);
const result: SoakResult = {
  command: ['npm run soak --', ...process.argv.slice(2)].join(' '),
  minutes: MINUTES,
  everyS: EVERY_S,
  warmupMin: WARMUP_MIN,
  pods: PODS,
  longPods: long.pods.length,
  crashingPods: crashing.length,
  verbosity: Number(VERBOSITY),
  allRunningAtS,
  bound: DEFAULT_SOAK_BOUND,
  verdict,
  end,
  last: rows[rows.length - 1],
};
const md = renderSoak(result, machine());
writeResults(OUT, { ...result, machine: machine(), samples: rows }, md);
console.log(md);
