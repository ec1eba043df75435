/**
 * Runs one fault N times and measures each run: the time from the injection
 * until every invariant holds again and /pods agrees with the runtime, and
 * keeps holding for the fault's hold window (polled every 250 ms: the
 * figures' resolution; timed to the start of that unbroken streak), what was lost or
 * duplicated on the way and at the end (after 5 more relists), and the
 * agent's RSS and open descriptors against its level before the fault.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { seededRandom } from '../../src/sim/faults.js';
import {
  baselineOf,
  checkRuntime,
  checkStatuses,
  countViolations,
  ranPerPods,
  restartsInPods,
  type Baseline,
  type Violations,
} from './invariants.js';
import type { Fault, FaultContext, RuntimeControl } from './fault.js';
import { NodeUnderTest } from './node-under-test.js';
import type { ClusterControl } from './private-control-plane.js';
import { DEFAULT_HOLD_MS, holdPoll, initialHold, type HoldState } from './hold.js';
import { procUsage, withinBound, type ProcUsage } from './proc-usage.js';
import { makeWorkload, runtimePodName } from './workload.js';

export interface RunRecord {
  run: number;
  /** 'start' faults: ms after /healthz at which the fault hit. */
  injectedAfterMs?: number;
  /** Running containers of the workload when the fault hit. */
  runningAtInjection: number;
  recovered: boolean;
  /**
   * Injection → all invariants hold and /pods agrees, at the start of the streak that then held for
   * `holdMs` (or the deadline, when not recovered); for a fault that lasts (an outage), from its end
   * (FaultContext.endedAt); for an armed fault, from its hit (FaultContext.hitAt).
   */
  recoveryMs: number;
  /** The hold window of this run (absent in records from before the hold). */
  holdMs?: number;
  /** The same origin → the first poll at which every check passed (earlier than recoveryMs when a check broke after). */
  firstPassMs?: number;
  /** Passing streaks that broke before one held for the window. */
  brokeAfterFirstPass?: number;
  /** An armed fault: injection (the arming) → its hit. */
  hitAfterMs?: number;
  /** An armed fault that never hit: why (not counted as recovered from a hit). */
  missed?: string;
  lost: number;
  duplicates: number;
  /** The most duplicates seen at once while recovering (a transient duplicate is a defect too). */
  duplicatesSeen: number;
  healthyRestarted: number;
  terminatedRestarted: number;
  /** Pods the fault deleted that still ran at the end. */
  deletedRunning?: number;
  /** The fault's own checks that broke (a lease not recreated, a Node registered again before a restart, …). */
  otherBroken?: number;
  startsInterrupted: number;
  usageBefore?: ProcUsage;
  usageAfter?: ProcUsage;
  usageOk: boolean;
  usageWhy?: string;
  /** Up to 10 violations, for the reader. */
  details: string[];
}

export interface FaultResult {
  id: string;
  title: string;
  runtime: 'sim' | 'containerd';
  pods: number;
  moment: 'start' | 'steady';
  /** 'start' faults: the reference run's time from /healthz to all pods Running (the window the fault is drawn in). */
  startWindowMs?: number;
  runs: RunRecord[];
}

export interface RunnerOptions {
  runs: number;
  seed: number;
  /** Pods per node (overrides the fault's own count, e.g. for the CI subset). */
  pods?: number;
  recoveryDeadlineMs: number;
  /** Relists to wait for after recovery before the final check and the usage sample (default 5). */
  settleRelists?: number;
  /** The hold window for every fault (default: each fault's own, Fault.holdMs, else DEFAULT_HOLD_MS). */
  holdMs?: number;
  runtime?: RuntimeControl;
  /** The control plane of faults whose pods come from the apiserver. */
  cluster?: ClusterControl;
  log: (line: string) => void;
}

const POLL_MS = 250;
const LOG_DIR = join(import.meta.dirname, '../../.run/faults');

/** Keeps the agent's log of a run that broke an invariant (every agent of the run, in order): its path from the repository. */
function saveAgentLog(node: NodeUnderTest, run: number): string {
  mkdirSync(LOG_DIR, { recursive: true });
  const path = join(LOG_DIR, `${node.nodeName}-run${run}.log`);
  writeFileSync(path, node.agent.logs.join('\n') + '\n');
  return relative(join(import.meta.dirname, '../..'), path);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runFault(fault: Fault, o: RunnerOptions): Promise<FaultResult> {
  const pods = o.pods ?? fault.node.pods;
  const rand = seededRandom(o.seed);
  const endpoint = fault.node.runtime === 'sim' ? 'sim' : o.runtime?.endpoint;
  if (!endpoint) throw new Error(`fault ${fault.id} needs a containerd (RuntimeControl)`);
  const api = fault.node.source === 'api';
  if (api && !o.cluster) throw new Error(`fault ${fault.id} needs a control plane (ClusterControl)`);
  let serial = 0;
  const newNode = () => {
    const tag = `${fault.id}-${o.seed}-${serial++}`.replace(/[^a-z0-9-]/g, '').slice(0, 40);
    return new NodeUnderTest({
      endpoint,
      nodeName: `n-${tag}`,
      workload: makeWorkload(`flt-${tag}`.slice(0, 63), pods, api ? 'api' : 'static'),
      agentEnv: fault.node.agentEnv,
      dirsOnTmpfs: fault.node.dirsOnTmpfs,
      ...(api ? { cluster: o.cluster } : {}),
    });
  };
  const context = (node: NodeUnderTest): FaultContext => ({ node, runtime: o.runtime, notes: [], broken: [] });
  const result: FaultResult = { id: fault.id, title: fault.title(pods), runtime: fault.node.runtime, pods, moment: fault.moment, runs: [] };

  if (fault.moment === 'start') {
    const ref = newNode();
    let reference: ProcUsage | undefined;
    try {
      await ref.start();
      const t0 = Date.now();
      await recover(ref, undefined, o.recoveryDeadlineMs, 0);
      result.startWindowMs = Date.now() - t0;
      await ref.settle(o.settleRelists);
      reference = procUsage(ref.agent.pid!);
    } finally {
      await ref.close();
    }
    o.log(`${fault.id}: reference start of ${pods} pods took ${result.startWindowMs} ms`);
    for (let run = 1; run <= o.runs; run++) {
      const node = newNode();
      try {
        await node.start();
        const delay = Math.round(rand() * result.startWindowMs);
        await sleep(delay);
        const ctx = context(node);
        const before = fault.baselineBeforeInject ? baselineOf(await node.runtimeView()) : undefined;
        const injectedAt = Date.now();
        await fault.inject(ctx);
        const baseline = before ?? baselineOf(await node.runtimeView());
        await fault.recover(ctx);
        if (fault.recoveryFrom === 'recover') ctx.endedAt ??= Date.now();
        const rec = await measure(fault, ctx, run, injectedAt, baseline, reference, o);
        rec.injectedAfterMs = delay;
        result.runs.push(rec);
        o.log(`${fault.id} run ${run}: ${describe(rec)}`);
      } finally {
        await node.close();
      }
    }
    return result;
  }

  const steadyNode = async () => {
    const node = newNode();
    await node.start();
    const up = await recover(node, undefined, o.recoveryDeadlineMs, 0);
    if (!up.recovered) o.log(`${fault.id}: the node did not reach every pod running before the injection`);
    await node.settle(o.settleRelists);
    return node;
  };
  let node: NodeUnderTest | undefined;
  try {
    for (let run = 1; run <= o.runs; run++) {
      if (fault.fresh) await node?.close();
      if (!node || fault.fresh) node = await steadyNode();
      const before = procUsage(node.agent.pid!);
      const view = await node.runtimeView();
      const baseline = baselineOf(view);
      const injectedAt = Date.now();
      const ctx = context(node);
      await fault.inject(ctx);
      await fault.recover(ctx);
      if (fault.recoveryFrom === 'recover') ctx.endedAt ??= Date.now();
      const rec = await measure(fault, ctx, run, injectedAt, baseline, before, o);
      result.runs.push(rec);
      o.log(`${fault.id} run ${run}: ${describe(rec)}`);
    }
  } finally {
    await node?.close();
  }
  return result;
}

interface Recovery {
  recovered: boolean;
  /** The polls' streaks: when every check first passed, when the final streak began, what broke before. */
  hold: HoldState;
  duplicatesSeen: number;
  last?: Violations;
  /** What was still missing at the last poll. */
  pending: string[];
  /** The last few things recovery waited for, each with when it stopped being the first thing missing. */
  steps: { what: string; at: number }[];
}

/**
 * Polls until every invariant holds, /pods (or the apiserver) agrees with the runtime and the fault's own
 * recovery is done, at every poll for `holdMs` without a break, or the deadline; `pending` then says what
 * was still missing.
 */
async function recover(
  node: NodeUnderTest,
  baseline: Baseline | undefined,
  deadlineMs: number,
  holdMs: number,
  faultPending?: () => Promise<string | undefined>,
): Promise<Recovery> {
  const deadline = Date.now() + deadlineMs;
  let hold = initialHold();
  let duplicatesSeen = 0;
  let last: Violations | undefined;
  let pending: string[] = [];
  const steps: { what: string; at: number }[] = [];
  const step = () => {
    const what = (pending[0] ?? '').replace(/\d+/g, 'N').slice(0, 80);
    const last = steps.at(-1);
    if (last?.what === what) last.at = Date.now();
    else steps.push({ what, at: Date.now() });
    if (steps.length > 3) steps.shift();
  };
  for (;;) {
    try {
      const view = await node.runtimeView();
      const pods = await node.pods();
      last = checkRuntime(node.workload, node.nodeName, view, baseline, ranPerPods(pods));
      const n = countViolations(last);
      duplicatesSeen = Math.max(duplicatesSeen, n.duplicates);
      // A run-once pod whose start was cut off is lost for good (counted at the end), not pending.
      pending = [...last.lost, ...last.deletedRunning];
      if (n.duplicates > 0) pending.unshift(`${n.duplicates} duplicates`);
      if (pending.length === 0) {
        pending = checkStatuses(node.workload, node.nodeName, view, pods);
        const own = pending.length === 0 ? await faultPending?.() : undefined;
        if (own) pending = [own];
      }
    } catch (err) {
      pending = [`no answer: ${(err as Error).message.slice(0, 200)}`];
      // The runtime or the agent is not answering yet.
    }
    const polled = holdPoll(hold, Date.now(), pending[0], holdMs);
    hold = polled.state;
    if (polled.held) return { recovered: true, hold, duplicatesSeen, last, pending, steps };
    if (pending.length) step();
    if (Date.now() > deadline) return { recovered: false, hold, duplicatesSeen, last, pending, steps };
    await sleep(POLL_MS);
  }
}

async function measure(
  fault: Fault,
  ctx: FaultContext,
  run: number,
  injectedAt: number,
  baseline: Baseline,
  reference: ProcUsage | undefined,
  o: RunnerOptions,
): Promise<RunRecord> {
  const node = ctx.node;
  const deadlineMs = o.recoveryDeadlineMs;
  const runningAtInjection = baseline.running.size;
  const holdMs = o.holdMs ?? fault.holdMs ?? DEFAULT_HOLD_MS;
  const r = await recover(node, baseline, deadlineMs, holdMs, fault.pending && (() => fault.pending!(ctx)));
  const from = ctx.endedAt ?? ctx.hitAt ?? injectedAt;
  const sec = (at: number) => ((at - from) / 1000).toFixed(1);
  const recoveryMs = (r.recovered ? r.hold.streakFrom! : Date.now()) - from;
  if (r.steps.length) ctx.notes.push(`last waited for: ${r.steps.map((x) => `${x.what} (until ${sec(x.at)} s)`).join(', ')}`);
  if (r.hold.breaks)
    ctx.notes.push(
      `broke after first pass (${sec(r.hold.firstPassAt!)} s) ${r.hold.breaks}×: ` +
        r.hold.brokeOn.map((b) => `${b.what} at ${sec(b.at)} s`).join(', '),
    );
  let final = r.last;
  const details: string[] = [];
  if (r.recovered) {
    await node.settle(o.settleRelists);
    const view = await node.runtimeView();
    const pods = await node.pods();
    final = checkRuntime(node.workload, node.nodeName, view, baseline, ranPerPods(pods));
    const restarts = restartsInPods(node.workload, node.nodeName, view, pods);
    final.healthyRestarted.push(...restarts.restarted);
    details.push(...restarts.bumped.map((b) => `${b} (after a container that never started; upstream counts it too)`));
    details.push(...checkStatuses(node.workload, node.nodeName, view, pods).map((s) => `after settling: ${s}`));
    const long = new Set(
      node.workload.pods.filter((p) => p.kind === 'long').map((p) => runtimePodName(node.workload, p.name, node.nodeName)),
    );
    for (const c of view.containers.filter((x) => x.state === 'exited' && long.has(x.pod) && !x.neverStarted))
      details.push(`exited ${c.pod}/${c.name} ${await node.describeContainer(c.id)}`);
  } else {
    details.push(`not recovered within ${deadlineMs} ms; still missing: ${r.pending.slice(0, 5).join('; ')}`);
  }
  const v = final ?? {
    lost: ['no view of the runtime'],
    onceStartCutOff: [],
    duplicateSandboxes: [],
    duplicateContainers: [],
    healthyRestarted: [],
    terminatedRestarted: [],
    startsInterrupted: [],
    deletedRunning: [],
  };
  const n = countViolations(v);
  details.push(
    ...ctx.broken.map((b) => `broken: ${b}`),
    ...v.deletedRunning,
    ...v.lost.map((s) => `lost ${s}`),
    ...v.onceStartCutOff.map((s) => `lost ${s}: its one start was cut off (StartError), restartPolicy Never, Failed without running`),
    ...v.duplicateSandboxes,
    ...v.duplicateContainers,
    ...v.healthyRestarted,
    ...v.terminatedRestarted,
  );
  if (details.length || process.env.KTS_FAULT_KEEP_LOGS === '1') details.unshift(`agent log: ${saveAgentLog(node, run)}`);
  // The fault's own notes come first: a run with many violations keeps them, and its violations are cut at 12.
  const notes = [...ctx.notes, ...(fault.finalNotes?.(ctx) ?? []), ...(fault.notes?.(ctx) ?? [])];
  const after = node.agent.pid ? procUsage(node.agent.pid) : undefined;
  const bound = reference && after ? withinBound(reference, after) : { ok: false, why: 'no usage sample' };
  return {
    run,
    runningAtInjection,
    recovered: r.recovered,
    recoveryMs,
    holdMs,
    ...(r.hold.firstPassAt !== undefined ? { firstPassMs: r.hold.firstPassAt - from } : {}),
    brokeAfterFirstPass: r.hold.breaks,
    ...(ctx.hitAt !== undefined ? { hitAfterMs: ctx.hitAt - injectedAt } : {}),
    ...(ctx.missed ? { missed: ctx.missed } : {}),
    ...n,
    otherBroken: ctx.broken.length,
    duplicatesSeen: Math.max(r.duplicatesSeen, n.duplicates),
    startsInterrupted: v.startsInterrupted.length,
    usageBefore: reference,
    usageAfter: after,
    usageOk: bound.ok,
    ...(bound.why ? { usageWhy: bound.why } : {}),
    details: [...notes, ...details.slice(0, 12)],
  };
}

function describe(r: RunRecord): string {
  return (
    `${r.recovered ? 'recovered' : 'NOT recovered'} in ${r.recoveryMs} ms` +
    `${r.hitAfterMs !== undefined ? ` from the hit (${r.hitAfterMs} ms after arming)` : ''}${r.missed ? ` (MISSED: ${r.missed})` : ''}` +
    ` (held ${r.holdMs} ms, broke after first pass ${r.brokeAfterFirstPass}; running at injection ${r.runningAtInjection}` +
    `${r.injectedAfterMs !== undefined ? `, hit ${r.injectedAfterMs} ms after /healthz` : ''}); lost ${r.lost}, duplicates ${r.duplicates} ` +
    `(seen ${r.duplicatesSeen}), healthy restarted ${r.healthyRestarted}, terminated restarted ${r.terminatedRestarted}, ` +
    `deleted still running ${r.deletedRunning ?? 0}, other checks broken ${r.otherBroken ?? 0}, ` +
    `starts cut off ${r.startsInterrupted}; usage ${r.usageOk ? 'ok' : `NOT ok: ${r.usageWhy}`}` +
    (r.details.length ? `\n  ${r.details.join('\n  ')}` : '')
  );
}
