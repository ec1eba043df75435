/**
 * The status manager's apiserver half (upstream status_manager.go syncPod,
 * syncBatch, mergePodStatus, canBeDeleted):
 * - Every status change (StatusManager version bump) queues its pod; a change
 *   of one pod while it waits coalesces into one write. Writes run a few at a
 *   time on the main (rate-limited) client; the node's lease and status use
 *   another client, so a burst here never delays them.
 * - A write GETs the pod, then sends a strategic merge patch of
 *   `pods/<name>/status` from the status the apiserver has to ours, with the
 *   pod's UID as precondition. Conditions the kubelet does not own are kept
 *   from the apiserver (mergePodStatus).
 * - Static pods write to their mirror pod. A pod the apiserver has under
 *   another UID (deleted and recreated) is skipped. A pod it does not have
 *   (404) leaves the version unwritten, so the batch tries it again until the
 *   pod leaves the pod manager; any other failure is retried by the batch.
 * - Every 10 s, pods whose version was not written, whose apiserver object was
 *   never written (a recreated mirror pod), or whose apiserver status differs
 *   from what was last written in a newer resourceVersion (someone else changed
 *   it; a watch copy older than our write is not drift) are queued.
 * - After a write, a pod that is being deleted, whose termination has finished
 *   (StatusManager.terminatePod: containers stopped and volumes torn down) and
 *   whose apiserver phase is terminal is deleted with grace 0 and a UID
 *   precondition (today's upstream canBeDeleted; v1.20.2's
 *   PodResourcesAreReclaimed also waited for the containers to be removed).
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Histogram } from 'prom-client';
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { ApiStatusError } from '../../common/errors.js';
import { FailureLog } from '../../common/failure-log.js';
import { v as klogV } from '../../common/logger.js';
import { runPeriodically } from '../../common/periodic.js';
import { isConflict, isNotFound, type RestClient } from '../apiserver/rest-client.js';
import { twoWayMergePatch } from '../apiserver/strategic-patch.js';
import type { PodManager } from '../podconfig/pod-manager.js';
import { API_SOURCE, CONFIG_SOURCE_ANNOTATION, isStaticPod } from '../podconfig/types.js';
import { KUBELET_OWNED_CONDITIONS } from './pod-conditions.js';
import type { StatusManager } from './status-manager.js';

export const STATUS_BATCH_PERIOD_MS = 10_000;
const POD_STATUS_SCHEMA = { mergeKeys: { 'status.conditions': 'type', 'status.podIPs': 'ip', 'status.hostIPs': 'ip' } };

export interface StatusSyncOptions {
  client: RestClient;
  statusManager: StatusManager;
  podManager: PodManager;
  clock: Clock;
  logger: Logger;
  /** kubelet_pod_status_sync_duration_seconds */
  syncDuration?: Histogram;
  concurrency?: number;
}

/** Upstream mergePodStatus: kubelet-owned conditions from ours, every other condition from the apiserver's. */
export function mergePodStatus(apiStatus: ApiPodStatus | undefined, ours: ApiPodStatus): ApiPodStatus {
  const owned = (t: string) => KUBELET_OWNED_CONDITIONS.includes(t);
  const conditions = [
    ...(apiStatus?.conditions ?? []).filter((c) => !owned(c.type)),
    ...(ours.conditions ?? []).filter((c) => owned(c.type)),
  ];
  return { ...ours, conditions };
}

/**
 * True when the watch's copy is newer than the object our last write returned. resourceVersions are
 * opaque to clients by contract, but etcd's are increasing integers; other strings count as newer when
 * they differ. A copy without one cannot be placed and is not drift.
 */
function newer(watchRv: string | undefined, ourRv: string | undefined): boolean {
  if (!watchRv) return false;
  if (!ourRv) return true;
  if (/^\d+$/.test(watchRv) && /^\d+$/.test(ourRv)) return BigInt(watchRv) > BigInt(ourRv);
  return watchRv !== ourRv;
}

const kubeletView = (s: ApiPodStatus | undefined): unknown => {
  const plain = JSON.parse(JSON.stringify(s ?? {})) as ApiPodStatus;
  plain.conditions = (plain.conditions ?? []).filter((c) => KUBELET_OWNED_CONDITIONS.includes(c.type));
  return plain;
};

export class StatusSync {
  private readonly queued = new Set<string>();
  private readonly inFlight = new Set<string>();
  /** Version of each pod's status the apiserver has (by static/api pod UID). */
  private readonly written = new Map<string, number>();
  /** The status the apiserver returned after our last write, by target (api or mirror pod) UID. */
  private readonly lastReturned = new Map<string, { status: ApiPodStatus; resourceVersion?: string }>();
  private readonly deleted = new Set<string>();
  private readonly failures: FailureLog;
  private signal: AbortSignal | undefined;

  constructor(private readonly options: Readonly<StatusSyncOptions>) {
    this.failures = new FailureLog(options.logger, options.clock, 'Pod status update', 30_000);
    options.statusManager.onChange((uid) => this.enqueue(uid));
  }

  start(signal: AbortSignal): void {
    this.signal = signal;
    const onError = (err: unknown) => this.options.logger.error({ err }, 'Pod status sync batch failed');
    runPeriodically(() => this.syncBatch(), { periodMs: STATUS_BATCH_PERIOD_MS, signal, clock: this.options.clock, onError }).catch(
      onError,
    );
    this.pump();
  }

  /** Pods queued or being written (tests, shutdown). */
  get pending(): number {
    return this.queued.size + this.inFlight.size;
  }

  enqueue(uid: string): void {
    this.queued.add(uid);
    this.pump();
  }

  /** Upstream syncBatch: queue pods whose status version is unwritten or whose apiserver status drifted. */
  syncBatch(): void {
    const live = new Set(this.options.statusManager.uids());
    for (const uid of this.written.keys()) if (!live.has(uid)) this.written.delete(uid);
    for (const uid of this.deleted) if (!live.has(uid)) this.deleted.delete(uid);
    const targets = new Set<string>();
    for (const uid of live) {
      const v = this.options.statusManager.getVersioned(uid)!;
      const pod = this.options.podManager.get(uid);
      const deletable = pod?.metadata.deletionTimestamp && !this.deleted.has(uid) && v.podIsFinished === true;
      targets.add(this.target(uid)?.metadata.uid ?? '');
      if ((this.written.get(uid) ?? 0) < v.version || deletable) {
        this.queued.add(uid);
        continue;
      }
      const target = this.target(uid);
      if (!target) continue;
      const returned = this.lastReturned.get(target.metadata.uid ?? '');
      if (!returned) {
        this.queued.add(uid); // never written to this object (e.g. a recreated mirror pod)
      } else if (
        newer(target.metadata.resourceVersion, returned.resourceVersion) &&
        !isDeepStrictEqual(kubeletView(target.status), kubeletView(returned.status))
      ) {
        // Someone else changed it: write ours again, from what the apiserver has now (upstream needsReconcile).
        this.lastReturned.delete(target.metadata.uid ?? '');
        this.queued.add(uid);
      }
    }
    for (const uid of this.lastReturned.keys()) if (!targets.has(uid)) this.lastReturned.delete(uid);
    this.pump();
  }

  private pump(): void {
    if (!this.signal || this.signal.aborted) return;
    const limit = this.options.concurrency ?? 4;
    for (const uid of this.queued) {
      if (this.inFlight.size >= limit) return;
      if (this.inFlight.has(uid)) continue;
      this.queued.delete(uid);
      this.inFlight.add(uid);
      void this.syncPod(uid)
        .catch((err: unknown) => {
          this.failures.failure(err, { podUID: uid });
          this.written.delete(uid); // retried by the next batch
        })
        .finally(() => {
          this.inFlight.delete(uid);
          this.pump();
        });
    }
  }

  /** The apiserver object a pod's status is written to: the pod itself (api source) or its mirror pod. */
  private target(uid: string): Pod | undefined {
    const pod = this.options.podManager.get(uid);
    if (!pod) return undefined;
    if (isStaticPod(pod)) return this.options.podManager.mirrorPodOf(pod);
    return pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION] === API_SOURCE ? pod : undefined;
  }

  /**
   * Upstream syncPod: GET the pod, patch its status from what the apiserver has now to ours, then delete a
   * deleted pod whose termination has finished. A pod the apiserver does not have (404) leaves its version
   * unwritten: the batch tries again until the pod leaves the pod manager (upstream needsUpdate).
   */
  private async syncPod(uid: string): Promise<void> {
    const v = this.options.statusManager.getVersioned(uid);
    const pod = this.options.podManager.get(uid);
    const target = this.target(uid);
    if (!v || !pod || !target) return; // nothing to write to (yet): the batch retries a static pod once its mirror exists
    const targetUid = target.metadata.uid ?? '';
    const ns = target.metadata.namespace ?? 'default';
    const name = `${ns}/${target.metadata.name}`;
    const path = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(target.metadata.name ?? '')}`;
    const fresh = await this.get(path);
    if (!fresh) {
      klogV(this.options.logger, 3).info({ pod: name, podUID: targetUid }, 'Pod does not exist on the server');
      return;
    }
    if (fresh.metadata.uid !== targetUid) return this.recreated(uid, v.version, target, fresh);
    const base = fresh.status ?? {};
    const patch = twoWayMergePatch({ status: base }, { status: mergePodStatus(base, v.status) }, POD_STATUS_SCHEMA);
    let current = fresh;
    if (patch) {
      try {
        current = await this.options.client.patch<Pod>(`${path}/status`, { metadata: { uid: targetUid }, ...patch }, 'strategic', {
          signal: this.signal,
        });
      } catch (err) {
        if (isNotFound(err)) return; // deleted since the GET: as a 404 on the GET
        if (err instanceof ApiStatusError && isConflict(err) && /UID in precondition/.test(err.message)) {
          return this.recreated(uid, v.version, target, fresh);
        }
        throw err;
      }
    }
    this.lastReturned.set(targetUid, { status: current.status ?? {}, resourceVersion: current.metadata.resourceVersion });
    this.written.set(uid, v.version);
    if (v.pendingSince !== undefined) this.options.syncDuration?.observe((this.options.clock.now() - v.pendingSince) / 1000);
    this.options.statusManager.acknowledge(uid, v.version);
    this.failures.success();
    if (v.podIsFinished && !isStaticPod(pod)) await this.deleteIfTerminal(uid, current, path);
  }

  /** The pod as the apiserver has it now, or undefined when it has none by that name. */
  private async get(path: string): Promise<Pod | undefined> {
    try {
      return await this.options.client.get<Pod>(path, { signal: this.signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The apiserver has another pod under the name: ours was deleted and recreated; this version is not written. */
  private recreated(uid: string, version: number, target: Pod, other: Pod): void {
    this.options.logger.info(
      { pod: `${target.metadata.namespace}/${target.metadata.name}`, podUID: target.metadata.uid, newUID: other.metadata.uid },
      'Pod was deleted and then recreated; skipping its status update',
    );
    this.written.set(uid, version);
    // Not retried by the batch until the watch catches up.
    this.lastReturned.set(target.metadata.uid ?? '', { status: target.status ?? {}, resourceVersion: target.metadata.resourceVersion });
  }

  /**
   * Upstream canBeDeleted, for a pod whose termination has finished (podIsFinished): deleted with grace 0
   * and a UID precondition once the apiserver's copy has a deletionTimestamp and a terminal phase.
   */
  private async deleteIfTerminal(uid: string, current: Pod, path: string): Promise<void> {
    if (!current.metadata.deletionTimestamp || this.deleted.has(uid)) return;
    const phase = current.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') {
      klogV(this.options.logger, 3).info(
        { pod: `${current.metadata.namespace}/${current.metadata.name}`, phase },
        'Delaying pod deletion as the phase is non-terminal',
      );
      return;
    }
    try {
      await this.options.client.delete(path, { gracePeriodSeconds: 0, preconditions: { uid } }, { signal: this.signal });
      this.options.logger.info(
        { pod: `${current.metadata.namespace}/${current.metadata.name}`, podUID: uid },
        'Pod fully terminated and removed from the apiserver',
      );
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
    this.deleted.add(uid);
  }
}
