/**
 * The status manager (upstream pkg/kubelet/status), local part: the latest v1
 * PodStatus the kubelet computed for each pod, which /pods serves, with a
 * version per pod that grows on every change. A listener (the apiserver
 * status sync, status-sync.ts) is told of each change without waiting, and
 * catches up by comparing versions. Main thread only.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';

export interface VersionedStatus {
  status: ApiPodStatus;
  version: number;
  /** ms of the first change not yet acknowledged by the listener (kubelet_pod_status_sync_duration_seconds). */
  pendingSince?: number;
}

export type StatusListener = (uid: string) => void;

export class StatusManager {
  private readonly statuses = new Map<string, VersionedStatus>();
  private listener: StatusListener | undefined;

  constructor(private readonly now: () => number = () => 0) {}

  /** Registers the one listener told about every status change (the apiserver sync). */
  onChange(listener: StatusListener): void {
    this.listener = listener;
  }

  setPodStatus(pod: Pod, status: ApiPodStatus): void {
    const uid = pod.metadata.uid ?? '';
    const old = this.statuses.get(uid);
    if (old && isDeepStrictEqual(old.status, status)) return;
    this.statuses.set(uid, { status, version: (old?.version ?? 0) + 1, pendingSince: old?.pendingSince ?? this.now() });
    this.listener?.(uid);
  }

  getPodStatus(uid: string): ApiPodStatus | undefined {
    return this.statuses.get(uid)?.status;
  }

  getVersioned(uid: string): VersionedStatus | undefined {
    return this.statuses.get(uid);
  }

  /** The listener wrote `version` of this pod's status: clears the pending-since time if nothing newer came. */
  acknowledge(uid: string, version: number): void {
    const s = this.statuses.get(uid);
    if (s && s.version === version) s.pendingSince = undefined;
  }

  uids(): string[] {
    return [...this.statuses.keys()];
  }

  removePodStatus(uid: string): void {
    this.statuses.delete(uid);
  }

  /** Drops statuses of pods that are neither desired nor known to the pod workers. */
  removeOrphanedStatuses(keep: (uid: string) => boolean): void {
    for (const uid of this.statuses.keys()) if (!keep(uid)) this.statuses.delete(uid);
  }
}
