/**
 * The pod workers (upstream pkg/kubelet/pod_workers.go as rewritten in v1.22,
 * with its terminating and terminated states; v1.20's pod workers had one
 * working flag per UID and killed pods outside them): the main thread's
 * per-UID state machine that serializes the work the syncer does for a pod.
 *
 * Contract, per UID:
 *  - States only move forward: syncing → terminating → terminated → finished.
 *    A terminated or finished UID never syncs again. A 'create' for a UID that
 *    is already terminating only sets restartRequested; the record is purged by
 *    syncKnownPods once finished, and the caller (HandlePodCleanups) then
 *    sends a fresh 'create' (upstream static-pod UID reuse).
 *  - One pendingUpdate: a newer update replaces it, it is never appended to.
 *  - At most one syncer call in flight. Updates arriving meanwhile coalesce
 *    and run, newest only, when the call returns.
 *  - Becoming terminating (kill update, deletionTimestamp, terminal phase, or
 *    orphaned by syncKnownPods) aborts the in-flight call's signal; so does a
 *    shortened grace period while terminating. The syncer must treat an
 *    aborted signal as "stop soon" and may reject.
 *  - Once terminating, every update is treated as a kill and the grace period
 *    only decreases (effectiveGracePeriod, minimum 1 s).
 *  - After each call the UID is queued for a resync: immediately on a phase
 *    transition, else after syncFrequency (success), 1 s (network not ready)
 *    or 10 s (error), each jittered up to +50%. The syncLoop's 1 s tick reads
 *    due UIDs through dueForResync().
 * Static pods sharing a full name start one at a time, in arrival order.
 *
 * All methods are called on the main thread; none blocks. Work starts in a
 * macrotask, so updates made in one synchronous burst coalesce.
 */
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { podFullName, type Pod } from '../../api/pod.js';
import { errorMessage } from '../../common/error-message.js';
import { SyncBackoffError } from '../../common/errors.js';
import { vEnabled } from '../../common/logger.js';
import {
  effectiveGracePeriod,
  isRuntimeStatusTerminal,
  isStarted,
  isStaticPod,
  isTerminalPhase,
  isTerminated,
  isTerminationRequested,
  jitter,
  mergeLastUpdate,
  newPodSyncStatus,
  runtimePodToApiPod,
  workType,
  StaticPodStartOrder,
  BACKOFF_PERIOD_MS,
  DEFAULT_RESYNC_INTERVAL_MS,
  JITTER_FACTOR,
  NETWORK_NOT_READY_MSG,
  TRANSIENT_BACKOFF_MS,
  type PodStatusFunc,
  type PodSyncStatus,
  type PodWorkerState,
  type PodWorkerSync,
  type PodWorkersOptions,
  type UpdatePodOptions,
} from './pod-sync-status.js';
import { ResyncQueue } from './resync-queue.js';

export * from './pod-sync-status.js';

export class PodWorkers {
  private readonly statuses = new Map<string, PodSyncStatus>();
  private readonly resyncs: ResyncQueue;
  private readonly loops = new Set<Promise<void>>();
  private readonly staticOrder = new StaticPodStartOrder();
  /** Set by the first syncKnownPods: until then unknown UIDs may still be running. */
  private podsSynced = false;
  private readonly resyncMs: number;
  private readonly backOffMs: number;
  private readonly random: () => number;

  constructor(private readonly options: Readonly<PodWorkersOptions>) {
    this.resyncMs = options.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS;
    this.backOffMs = options.backOffPeriodMs ?? BACKOFF_PERIOD_MS;
    this.random = options.random ?? Math.random;
    this.resyncs = new ResyncQueue(options.clock);
  }

  /** Delivers an update (upstream UpdatePod). Never blocks; see the module contract. */
  update(input: UpdatePodOptions): void {
    const options: UpdatePodOptions = { ...input, killPodOptions: input.killPodOptions && { ...input.killPodOptions } };
    let isRuntimePod = false;
    let uid: string | undefined;
    let fullname: string;
    if (options.runningPod && !options.pod) {
      if (options.updateType !== 'kill') {
        this.options.logger?.info({ podUID: options.runningPod.uid }, 'Pod update is ignored, runtime pods can only be killed');
        return;
      }
      isRuntimePod = true;
      uid = options.runningPod.uid;
      fullname = `${options.runningPod.name}_${options.runningPod.namespace}`;
    } else if (options.pod) {
      options.runningPod = undefined;
      uid = options.pod.metadata.uid;
      fullname = podFullName(options.pod);
    } else {
      return;
    }
    if (!uid) return;

    const now = this.options.clock.now();
    let status = this.statuses.get(uid);
    let firstTime = false;
    if (!status) {
      firstTime = true;
      status = newPodSyncStatus(fullname, now);
      // A terminal pod first seen with a terminal runtime status (kubelet restart) skips straight to terminated.
      if (options.pod && isTerminalPhase(options.pod)) {
        const cached = this.options.podStatus?.(uid);
        if (cached && isRuntimeStatusTerminal(cached)) {
          status.terminatingAt = now;
          status.terminatedAt = now;
          status.startedTerminating = true;
        }
      }
      this.statuses.set(uid, status);
    }

    let pod: Pod;
    if (isRuntimePod) {
      status.observedRuntime = true;
      const known = status.pendingUpdate?.pod ?? status.activeUpdate?.pod;
      if (known) {
        pod = known;
        options.pod = known;
        options.runningPod = undefined;
      } else {
        pod = runtimePodToApiPod(options.runningPod!);
      }
    } else {
      pod = options.pod!;
    }

    if (!firstTime && isTerminationRequested(status) && options.updateType === 'create') {
      status.restartRequested = true;
      return;
    }
    if (status.finished) return;

    let becameTerminating = false;
    if (!isTerminationRequested(status)) {
      if (isRuntimePod || pod.metadata.deletionTimestamp) {
        status.deleted = true;
        becameTerminating = true;
      } else if (isTerminalPhase(pod)) {
        becameTerminating = true;
      } else if (options.updateType === 'kill') {
        if (options.killPodOptions?.evict) status.evicted = true;
        becameTerminating = true;
      }
      if (becameTerminating) status.terminatingAt = now;
    }

    let gracePeriodShortened = false;
    if (isTerminated(status)) {
      if (isRuntimePod) return;
      options.killPodOptions = undefined;
    } else if (isTerminationRequested(status)) {
      const kill = (options.killPodOptions ??= {});
      if (kill.podStatusFunc) status.statusPostTerminating.push(kill.podStatusFunc);
      const { gracePeriod, shortened } = effectiveGracePeriod(status.gracePeriod, pod, kill.gracePeriodSeconds);
      gracePeriodShortened = shortened;
      status.gracePeriod = gracePeriod;
      kill.gracePeriodSeconds = gracePeriod;
    } else {
      options.killPodOptions = undefined;
    }

    if (!isRuntimePod && isStaticPod(pod) && !isStarted(status)) {
      this.staticOrder.enqueue(status.fullname, uid);
    }

    const pendingStart = status.pendingUpdate?.startTime;
    if (pendingStart !== undefined && (options.startTime === undefined || pendingStart < options.startTime)) {
      options.startTime = pendingStart;
    }
    status.pendingUpdate = options;
    status.working = true;
    this.wake(uid, status);

    if ((becameTerminating || gracePeriodShortened) && status.abort && !status.abort.signal.aborted) {
      status.abort.abort(new DOMException('pod sync cancelled', 'AbortError'));
    }
  }

  /** Returns and dequeues the UIDs whose resync or retry is due (upstream workQueue.GetWork). */
  dueForResync(now: number = this.options.clock.now()): string[] {
    return this.resyncs.getWork(now);
  }

  /** When the UID is next due for a resync, if queued. */
  resyncDueAt(uid: string): number | undefined {
    return this.resyncs.dueAtOf(uid);
  }

  /**
   * Prunes workers (upstream SyncKnownPods): a finished worker whose pod is no
   * longer desired, or whose UID was re-created, is forgotten and left out of
   * the result. A worker orphaned before finishing is driven to termination
   * (an unstarted one is simply dropped). Returns the remaining workers.
   */
  syncKnownPods(desiredPods: Pod[]): Map<string, PodWorkerSync> {
    const known = new Set(desiredPods.map((p) => p.metadata.uid));
    const result = new Map<string, PodWorkerSync>();
    this.podsSynced = true;
    for (const [uid, status] of [...this.statuses]) {
      const orphan = !known.has(uid);
      if ((status.restartRequested || orphan) && this.removeTerminatedWorker(uid, status, orphan)) continue;
      const pod = status.activeUpdate ? status.activeUpdate.pod : status.pendingUpdate?.pod;
      result.set(uid, { state: workType(status), orphan, hasConfig: pod !== undefined, static: pod !== undefined && isStaticPod(pod) });
    }
    return result;
  }

  /** The pod worker has seen termination complete (upstream IsPodKnownTerminated). */
  isPodKnownTerminated(uid: string): boolean {
    return this.query(uid, isTerminated, false);
  }

  /** False only when the worker proved the containers stopped, or the UID is unknown after syncKnownPods. */
  couldHaveRunningContainers(uid: string): boolean {
    return this.query(uid, (s) => !isTerminated(s), !this.podsSynced);
  }

  /** syncTerminatedPod has completed, or the UID is unknown after syncKnownPods. */
  shouldPodBeFinished(uid: string): boolean {
    return this.query(uid, (s) => s.finished, this.podsSynced);
  }

  isPodTerminationRequested(uid: string): boolean {
    return this.query(uid, isTerminationRequested, false);
  }

  shouldPodContainersBeTerminating(uid: string): boolean {
    return this.query(uid, isTerminationRequested, this.podsSynced);
  }

  shouldPodRuntimeBeRemoved(uid: string): boolean {
    return this.query(uid, isTerminated, this.podsSynced);
  }

  /** Volumes and directories may go: evicted, or deleted and terminated, or unknown after syncKnownPods. */
  shouldPodContentBeRemoved(uid: string): boolean {
    return this.query(uid, (s) => s.evicted || (s.deleted && isTerminated(s)), this.podsSynced);
  }

  /** `known` of the UID's record, else `unknown`. */
  private query(uid: string, known: (s: PodSyncStatus) => boolean, unknown: boolean): boolean {
    const s = this.statuses.get(uid);
    return s ? known(s) : unknown;
  }

  /** The static pod started under this full name is terminating (upstream IsPodForMirrorPodTerminatingByFullName). */
  isPodForMirrorPodTerminatingByFullName(fullname: string): boolean {
    const uid = this.staticOrder.startedUid(fullname);
    const s = uid === undefined ? undefined : this.statuses.get(uid);
    return s !== undefined && isTerminationRequested(s) && !isTerminated(s);
  }

  /** The worker state of a UID, if known (for diagnostics and tests). */
  stateOf(uid: string): (PodWorkerState | 'finished') | undefined {
    const s = this.statuses.get(uid);
    if (!s) return undefined;
    return s.finished ? 'finished' : workType(s);
  }

  /** Resolves once no worker has queued or running work. Tests only; never call from the syncLoop. */
  async idle(): Promise<void> {
    while (this.loops.size > 0) await Promise.all([...this.loops]);
  }

  // --- the per-pod worker loop -------------------------------------------------

  private wake(uid: string, status: PodSyncStatus): void {
    if (status.loop) return;
    const loop = this.workerLoop(uid, status);
    status.loop = loop;
    this.loops.add(loop);
    void loop
      .catch((err: unknown) => this.options.logger?.error({ err, podUID: uid }, 'Pod worker failed'))
      .finally(() => this.loops.delete(loop));
  }

  /** upstream logs each failed sync; one with a node-level cause is logged once per cause instead. */
  private logSyncError(uid: string, error: unknown): void {
    const cause = this.options.causes?.of(error);
    if (cause === undefined) this.options.logger?.error({ err: error, podUID: uid }, 'Error syncing pod, skipping');
    else this.options.causes!.log.failure(cause, uid, 'Error syncing pod, skipping', { err: errorMessage(error), podUID: uid });
  }

  /** Runs pending work until none is left; status.loop is cleared in the same turn as the last check. */
  private async workerLoop(uid: string, status: PodSyncStatus): Promise<void> {
    // A macrotask of its own, so a burst of new pods reaches the runtime depth-first (docs/architecture.md).
    await nextMacrotask();
    try {
      for (;;) {
        const work = this.startPodSync(uid, status);
        if (!work) return;
        const { kind, update, signal } = work;
        let terminal = false;
        let error: unknown;
        try {
          terminal = await this.runSync(uid, status, kind, update, signal);
        } catch (e) {
          error = e ?? new Error('sync failed');
          // upstream: a sync that failed only on a running backoff returns no error, so it is not logged as one.
          if (!signal.aborted && error instanceof SyncBackoffError)
            this.options.logger?.debug({ err: error, podUID: uid }, 'Pod is in a backoff');
          else if (!signal.aborted) this.logSyncError(uid, error);
        }
        if (error === undefined) this.options.causes?.log.success(uid);
        status.syncedAt = this.options.clock.now();

        let phaseTransition = false;
        if (error === undefined && kind === 'terminated') {
          this.completeTerminated(uid, status);
          return;
        } else if (error === undefined && kind === 'terminating') {
          if (update.runningPod) {
            this.completeTerminatingRuntimePod(uid, status);
            return;
          }
          status.terminatedAt = this.options.clock.now();
          status.statusPostTerminating = [];
          this.requeueLastPodUpdate(status);
          phaseTransition = true;
        } else if (error === undefined && terminal) {
          status.terminatingAt ??= this.options.clock.now();
          status.startedTerminating = true;
          this.requeueLastPodUpdate(status);
          phaseTransition = true;
        }
        this.completeWork(uid, phaseTransition, error);
      }
    } finally {
      status.loop = undefined;
    }
  }

  /** Calls the syncer method for `kind`; resolves to syncPod's `terminal`. */
  private async runSync(
    uid: string,
    status: PodSyncStatus,
    kind: PodWorkerState,
    update: UpdatePodOptions,
    signal: AbortSignal,
  ): Promise<boolean> {
    const ctx = { signal };
    const pod = update.pod;
    const podStatus = pod && this.options.podStatus ? this.options.podStatus(uid) : undefined;
    const syncer = this.options.syncer;
    if (kind === 'terminated') {
      await syncer.syncTerminatedPod(ctx, pod!, podStatus);
    } else if (kind === 'terminating') {
      const psf = this.acknowledgeTerminating(status);
      const rp = update.runningPod;
      if (rp && syncer.syncTerminatingRuntimePod) await syncer.syncTerminatingRuntimePod(ctx, rp);
      else if (rp) await syncer.syncTerminatingPod(ctx, runtimePodToApiPod(rp), status.gracePeriod || 1);
      else {
        const gp = status.gracePeriod > 0 ? status.gracePeriod : effectiveGracePeriod(0, pod!, undefined).gracePeriod;
        await syncer.syncTerminatingPod(ctx, pod!, gp, psf, podStatus);
      }
    } else {
      return (await syncer.syncPod(ctx, update.updateType, pod!, podStatus, update.mirrorPod)).terminal;
    }
    return false;
  }

  /** Consumes the pending update (upstream startPodSync); undefined when the loop should stop. */
  private startPodSync(
    uid: string,
    status: PodSyncStatus,
  ): { kind: PodWorkerState; update: UpdatePodOptions; signal: AbortSignal } | undefined {
    if (this.statuses.get(uid) !== status || !status.pendingUpdate) {
      status.working = false;
      return undefined;
    }
    const update = status.pendingUpdate;
    status.pendingUpdate = undefined;
    const kind = workType(status);
    if (!status.abort || status.abort.signal.aborted) status.abort = new AbortController();
    const signal = status.abort.signal;

    if (isStarted(status) || (update.runningPod && kind === 'terminating')) {
      mergeLastUpdate(status, update);
      return { kind, update, signal };
    }
    if (!update.pod) {
      mergeLastUpdate(status, update);
      status.working = false;
      return undefined;
    }
    if (isStaticPod(update.pod)) {
      if (isTerminationRequested(status)) {
        // Terminated before it could ever start: nothing ran, so finish without syncing.
        status.terminatedAt ??= this.options.clock.now();
        status.finished = true;
        status.working = false;
        this.staticOrder.forget(status.fullname, uid);
        return undefined;
      }
      const skip = (w: string) => {
        const ws = this.statuses.get(w);
        return !ws || isTerminationRequested(ws);
      };
      if (!this.staticOrder.allow(status.fullname, uid, skip)) {
        if (this.options.logger && vEnabled(this.options.logger, 4)) {
          const blocker = this.staticOrder.startedUid(status.fullname);
          this.options.logger.debug(
            {
              pod: status.fullname,
              podUID: uid,
              reason: blocker
                ? `the static pod ${blocker} with the same full name has not finished terminating`
                : 'an earlier static pod with the same full name is waiting to start',
            },
            'Pod cannot start yet',
          );
        }
        status.pendingUpdate = update;
        status.working = false;
        this.resyncs.enqueue(uid, jitter(this.backOffMs, JITTER_FACTOR, this.random));
        return undefined;
      }
    }
    status.startedAt = this.options.clock.now();
    mergeLastUpdate(status, update);
    return { kind, update, signal };
  }

  /** Marks termination as started and returns the newest status function (upstream acknowledgeTerminating). */
  private acknowledgeTerminating(status: PodSyncStatus): PodStatusFunc | undefined {
    status.startedTerminating = true;
    return status.statusPostTerminating.at(-1);
  }

  private completeTerminated(uid: string, status: PodSyncStatus): void {
    status.finished = true;
    status.working = false;
    status.pendingUpdate = undefined;
    this.resyncs.forget(uid);
    this.staticOrder.forget(status.fullname, uid);
  }

  /** A runtime-only pod is not desired state: once killed, it is forgotten. */
  private completeTerminatingRuntimePod(uid: string, status: PodSyncStatus): void {
    status.terminatedAt = this.options.clock.now();
    status.finished = true;
    status.working = false;
    this.staticOrder.forget(status.fullname, uid);
    if (this.statuses.get(uid) === status) this.statuses.delete(uid);
    this.resyncs.forget(uid);
  }

  /** Replays the last update to drive the next phase, unless one is already pending. */
  private requeueLastPodUpdate(status: PodSyncStatus): void {
    if (status.pendingUpdate || !status.activeUpdate) return;
    status.pendingUpdate = { ...status.activeUpdate };
    status.working = true;
  }

  private completeWork(uid: string, phaseTransition: boolean, error: unknown): void {
    let delay: number;
    if (phaseTransition) delay = 0;
    else if (error === undefined) delay = jitter(this.resyncMs, JITTER_FACTOR, this.random);
    else if (String((error as Error)?.message ?? error).includes(NETWORK_NOT_READY_MSG))
      delay = jitter(TRANSIENT_BACKOFF_MS, JITTER_FACTOR, this.random);
    else delay = jitter(this.backOffMs, JITTER_FACTOR, this.random);
    this.resyncs.enqueue(uid, delay);
  }

  /** Upstream removeTerminatedWorker: true when the record was forgotten. */
  private removeTerminatedWorker(uid: string, status: PodSyncStatus, orphaned: boolean): boolean {
    if (!status.finished) {
      if (!orphaned) return false;
      status.deleted = true;
      if (isStarted(status) || status.observedRuntime) {
        if (!isTerminationRequested(status)) {
          status.terminatingAt = this.options.clock.now();
          const pod = status.activeUpdate?.pod;
          status.gracePeriod = pod ? effectiveGracePeriod(status.gracePeriod, pod, undefined).gracePeriod : 1;
          if (status.abort && !status.abort.signal.aborted) status.abort.abort(new DOMException('pod orphaned', 'AbortError'));
        }
        this.requeueLastPodUpdate(status);
        if (status.pendingUpdate) this.wake(uid, status);
        return false;
      }
    }
    this.statuses.delete(uid);
    this.resyncs.forget(uid);
    this.staticOrder.forget(status.fullname, uid);
    return true;
  }
}
