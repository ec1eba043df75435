/**
 * Per-pod bookkeeping of the pod workers (upstream podSyncStatus) and the
 * pure rules on it. Owned by PodWorkers on the main thread; nothing else
 * mutates a PodSyncStatus.
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
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import type { PodStatus as RuntimePodStatus, RuntimePod } from '../../runtime/types.js';

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
 * terminationGracePeriodSeconds; never below 1. `shortened` is true when an
 * already-set grace period decreased.
 */
export function effectiveGracePeriod(
  current: number,
  pod: Pod,
  override: number | undefined,
): { gracePeriod: number; shortened: boolean } {
  let gp = current;
  const deletion = pod.metadata.deletionGracePeriodSeconds;
  if (deletion != null && (gp === 0 || deletion < gp)) gp = deletion;
  if (override != null && (gp === 0 || override < gp)) gp = override;
  const spec = pod.spec.terminationGracePeriodSeconds;
  if (gp === 0 && spec != null) gp = spec;
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
export function runtimePodToApiPod(rp: RuntimePod): Pod {
  return { metadata: { uid: rp.uid, name: rp.name, namespace: rp.namespace }, spec: {} };
}

export function isTerminalPhase(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Failed' || phase === 'Succeeded';
}

/** Upstream kubetypes.IsStaticPod: the pod came from a file or HTTP source. */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.['kubernetes.io/config.source'];
  return source !== undefined && source !== 'api';
}
