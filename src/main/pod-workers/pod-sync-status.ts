/**
 * The types and pure rules behind PodWorkers (pod-workers.ts): the per-pod
 * record (upstream podSyncStatus), the update and syncer seams, the grace
 * period rule and static-pod start ordering. Owned by PodWorkers on the main
 * thread; nothing else mutates a PodSyncStatus.
 *
 * Lifecycle invariants (timestamps are set once and never cleared):
 *   syncing      terminatingAt === undefined
 *   terminating  terminatingAt set, terminatedAt unset
 *   terminated   terminatedAt set (implies terminatingAt set)
 *   finished     syncTerminatedPod completed; the UID accepts no more work
 *                until SyncKnownPods purges the record.
 * gracePeriod is 0 until termination is requested, then >= 1 and only ever
 * decreases.
 */
import type { Logger } from 'pino';
import type { CauseLog } from '../../common/cause-log.js';
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { PodStatus as RuntimePodStatus, RuntimePod } from '../../runtime/types.js';
import { isStaticPod } from '../podconfig/types.js';

export type SyncPodType = 'create' | 'update' | 'sync' | 'kill';

/** Which of the three syncer methods a piece of work runs (upstream PodWorkerState). */
export type PodWorkerState = 'syncing' | 'terminating' | 'terminated';

/** Builds the status the status manager should report while the pod terminates (upstream PodStatusFunc). */
export type PodStatusFunc = (pod: Pod, podStatus: RuntimePodStatus | undefined) => ApiPodStatus;

export interface KillPodOptions {
  /** Upstream PodTerminationGracePeriodSecondsOverride: may only shorten the grace period. */
  gracePeriodSeconds?: number;
  podStatusFunc?: PodStatusFunc;
  /** Upstream Evict: the kubelet evicted the pod, so its content may be removed once terminated. */
  evict?: boolean;
}

/**
 * One update delivered to the pod workers. Exactly one of `pod` and
 * `runningPod` is required; `runningPod` alone (an orphan seen only in the
 * runtime) is accepted only with updateType 'kill'.
 */
export interface UpdatePodOptions {
  pod?: Pod;
  mirrorPod?: Pod;
  runningPod?: RuntimePod;
  updateType: SyncPodType;
  killPodOptions?: KillPodOptions;
  /** When the update entered the kubelet (ms); the oldest pending start time is kept for latency metrics. */
  startTime?: number;
}

export interface PodSyncStatus {
  fullname: string;
  /** An update is pending or a sync is running. */
  working: boolean;
  /** The one queued update; newer updates replace it. */
  pendingUpdate?: UpdatePodOptions;
  /** The merged last update handed to a sync (replayed by requeue). */
  activeUpdate?: UpdatePodOptions;
  /** Aborts the in-flight sync; replaced by a fresh controller once aborted. */
  abort?: AbortController;
  syncedAt: number;
  startedAt?: number;
  terminatingAt?: number;
  terminatedAt?: number;
  gracePeriod: number;
  statusPostTerminating: PodStatusFunc[];
  startedTerminating: boolean;
  deleted: boolean;
  evicted: boolean;
  finished: boolean;
  restartRequested: boolean;
  observedRuntime: boolean;
  /** The running worker loop for this record, if any (at most one). */
  loop?: Promise<void>;
}

export function newPodSyncStatus(fullname: string, now: number): PodSyncStatus {
  return {
    fullname,
    working: false,
    syncedAt: now,
    gracePeriod: 0,
    statusPostTerminating: [],
    startedTerminating: false,
    deleted: false,
    evicted: false,
    finished: false,
    restartRequested: false,
    observedRuntime: false,
  };
}

export const isTerminationRequested = (s: PodSyncStatus): boolean => s.terminatingAt !== undefined;
export const isTerminated = (s: PodSyncStatus): boolean => s.terminatedAt !== undefined;
export const isStarted = (s: PodSyncStatus): boolean => s.startedAt !== undefined;

export function workType(s: PodSyncStatus): PodWorkerState {
  if (isTerminated(s)) return 'terminated';
  if (isTerminationRequested(s)) return 'terminating';
  return 'syncing';
}

/**
 * The grace period to terminate with (upstream calculateEffectiveGracePeriod):
 * the smallest of the current value, the pod's deletionGracePeriodSeconds and
 * the kill override; when none is set, the spec's
 * terminationGracePeriodSeconds; never below 1 (so a deletion grace period
 * of 0 is 1 s, not the spec's value). `shortened` is true when an
 * already-set grace period decreased.
 */
export function effectiveGracePeriod(current: number, pod: Pod, override: number | undefined): { gracePeriod: number; shortened: boolean } {
  let gp = current;
  // An explicit 0 (deletion or override) means "as fast as possible" (1 s below), never the spec's value.
  let overridden = false;
  const deletion = pod.metadata.deletionGracePeriodSeconds;
  if (deletion != null && (gp === 0 || deletion < gp)) {
    gp = deletion;
    overridden = true;
  }
  if (override != null && (gp === 0 || override < gp)) {
    gp = override;
    overridden = true;
  }
  const spec = pod.spec.terminationGracePeriodSeconds;
  if (!overridden && gp === 0 && spec != null) gp = spec;
  if (gp < 1) gp = 1;
  return { gracePeriod: gp, shortened: current !== 0 && current !== gp };
}

/**
 * Folds an update into activeUpdate (upstream mergeLastUpdate): the newest
 * config pod wins over a runtime-only pod; mirror pod and kill options are
 * remembered when a later update omits them.
 */
export function mergeLastUpdate(s: PodSyncStatus, other: UpdatePodOptions): void {
  const opts = (s.activeUpdate ??= { updateType: other.updateType });
  if (opts.pod === undefined || other.runningPod === undefined) opts.pod = other.pod;
  opts.runningPod = other.runningPod;
  opts.updateType = other.updateType;
  if (other.mirrorPod) opts.mirrorPod = other.mirrorPod;
  if (other.killPodOptions) opts.killPodOptions = other.killPodOptions;
}

/** A placeholder API pod for a runtime-only pod (upstream RunningPod.ToAPIPod). */
export function isRuntimeStatusTerminal(s: RuntimePodStatus): boolean {
  return !s.containerStatuses.some((c) => c.state === 'running') && !s.sandboxStatuses.some((sb) => sb.state === 'ready');
}

export function runtimePodToApiPod(rp: RuntimePod): Pod {
  return { metadata: { uid: rp.uid, name: rp.name, namespace: rp.namespace }, spec: { containers: [] } };
}

export function isTerminalPhase(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Failed' || phase === 'Succeeded';
}

export { isStaticPod };

// --- the seams of PodWorkers --------------------------------------------------

export interface SyncContext {
  /** Aborted when the pod must stop this work (termination or a shorter grace period). */
  signal: AbortSignal;
}

/** The work itself, injected (the kubelet dispatches it to the worker pool). A rejection is a sync error. */
export interface PodSyncer {
  syncPod(
    ctx: SyncContext,
    updateType: SyncPodType,
    pod: Pod,
    podStatus?: RuntimePodStatus,
    mirrorPod?: Pod,
  ): Promise<{ terminal: boolean }>;
  syncTerminatingPod(
    ctx: SyncContext,
    pod: Pod,
    gracePeriodSeconds: number,
    podStatusFunc?: PodStatusFunc,
    podStatus?: RuntimePodStatus,
  ): Promise<void>;
  syncTerminatedPod(ctx: SyncContext, pod: Pod, podStatus?: RuntimePodStatus): Promise<void>;
  /** Kills an orphan known only to the runtime. Absent: syncTerminatingPod on a placeholder pod. */
  syncTerminatingRuntimePod?(ctx: SyncContext, runningPod: RuntimePod): Promise<void>;
}

export interface PodWorkersOptions {
  syncer: PodSyncer;
  clock: Clock;
  /** syncFrequency: the resync interval after a successful sync. Default 60 s. */
  resyncIntervalMs?: number;
  /** Retry delay after a failed sync. Default 10 s (upstream backOffPeriod). */
  backOffPeriodMs?: number;
  /** Jitter source in [0, 1). Default Math.random; tests pass () => 0. */
  random?: () => number;
  /** The cached runtime status handed to the syncer (upstream podCache). */
  podStatus?: (uid: string) => RuntimePodStatus | undefined;
  logger?: Logger;
  /**
   * Sync errors with a node-level cause (the node's directories full or
   * unwritable: dirFailureCause) are logged once per cause through `log`,
   * not once per pod; `of` names the cause, undefined for a pod's own error.
   */
  causes?: { of(err: unknown): string | undefined; log: CauseLog };
}

/** What syncKnownPods reports per UID (upstream PodWorkerSync). */
export interface PodWorkerSync {
  state: PodWorkerState;
  /** The pod is not in the desired set. */
  orphan: boolean;
  /** A config pod (not only a runtime pod) is known. */
  hasConfig: boolean;
  static: boolean;
}

export const DEFAULT_RESYNC_INTERVAL_MS = 60_000;
export const BACKOFF_PERIOD_MS = 10_000;
export const TRANSIENT_BACKOFF_MS = 1_000;
export const JITTER_FACTOR = 0.5;
/** Sync errors containing this text are retried after TRANSIENT_BACKOFF_MS (upstream NetworkNotReadyErrorMsg). */
export const NETWORK_NOT_READY_MSG = 'network is not ready';

/** Upstream wait.Jitter: d + rand·factor·d. */
export function jitter(d: number, factor: number, random: () => number): number {
  return d + random() * factor * d;
}

/**
 * Static pods sharing a full name (a manifest edited in place gets a new UID)
 * start one at a time, in the order their first updates arrived; the next
 * may start once the started one is forgotten (upstream
 * allowStaticPodStart / startedStaticPodsByFullname).
 */
export class StaticPodStartOrder {
  private readonly waiting = new Map<string, string[]>();
  private readonly started = new Map<string, string>();

  /** Records that `uid` wants to start under `fullname` (idempotent). */
  enqueue(fullname: string, uid: string): void {
    const w = this.waiting.get(fullname) ?? [];
    if (!w.includes(uid)) w.push(uid);
    this.waiting.set(fullname, w);
  }

  /** May `uid` start now? `skip(uid)` is true for UIDs that will never start (terminating or gone). */
  allow(fullname: string, uid: string, skip: (uid: string) => boolean): boolean {
    const started = this.started.get(fullname);
    if (started !== undefined) return started === uid;
    let w = this.waiting.get(fullname) ?? [];
    for (let i = 0; i < w.length; i++) {
      if (skip(w[i])) continue;
      if (w[i] !== uid) {
        this.waiting.set(fullname, w.slice(i));
        return false;
      }
      w = w.slice(i + 1);
      break;
    }
    if (w.length > 0) this.waiting.set(fullname, w);
    else this.waiting.delete(fullname);
    this.started.set(fullname, uid);
    return true;
  }

  startedUid(fullname: string): string | undefined {
    return this.started.get(fullname);
  }

  forget(fullname: string, uid: string): void {
    if (this.started.get(fullname) === uid) this.started.delete(fullname);
  }
}
