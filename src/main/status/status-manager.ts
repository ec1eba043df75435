/**
 * The status manager (upstream pkg/kubelet/status), local part: the latest v1
 * PodStatus the kubelet computed for each pod, which /pods serves, with a
 * version per pod that grows on every change. A listener (the apiserver
 * status sync, status-sync.ts) is told of each change without waiting, and
 * catches up by comparing versions. Main thread only.
 *
 * As upstream's updateStatusInternal, a status that moves a terminated
 * container back to waiting or running when the restart policy forbids it
 * (checkContainerStateTransition) is dropped and logged; the previous status
 * stays. The status before the first one the kubelet computed is the mirror
 * pod's (static pods) or the pod's own from its source.
 *
 * `terminatePod` (upstream TerminatePod at the end of SyncTerminatedPod) makes
 * the pod's status final and marks it finished: its teardown (containers
 * stopped, volumes unmounted) is over. Only then may the apiserver object of a deleted pod be
 * removed (status-sync.ts, upstream canBeDeleted). Once finished, a status
 * stays finished.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import type { PodManager } from '../podconfig/pod-manager.js';
import { checkContainerStateTransition } from './container-state-transition.js';
import { terminatedPodStatus } from './terminated-pod-status.js';

export interface VersionedStatus {
  status: ApiPodStatus;
  version: number;
  /** ms of the first change not yet acknowledged by the listener (kubelet_pod_status_sync_duration_seconds). */
  pendingSince?: number;
  /** The pod's termination has finished (upstream podIsFinished): set by terminatePod. */
  podIsFinished?: boolean;
}

export type StatusListener = (uid: string) => void;

export interface StatusManagerOptions {
  /** Where dropped statuses are logged. */
  logger?: Logger;
  /** Has a static pod's mirror pod, whose status is the starting point before the kubelet's first one. */
  podManager?: Pick<PodManager, 'mirrorPodOf'>;
}

export class StatusManager {
  private readonly statuses = new Map<string, VersionedStatus>();
  private listener: StatusListener | undefined;

  constructor(
    private readonly now: () => number = () => 0,
    private readonly options: Readonly<StatusManagerOptions> = {},
  ) {}

  /** Registers the one listener told about every status change (the apiserver sync). */
  onChange(listener: StatusListener): void {
    this.listener = listener;
  }

  setPodStatus(pod: Pod, status: ApiPodStatus): void {
    this.update(pod, status, false);
  }

  /**
   * The pod's teardown is over (upstream TerminatePod): its status becomes final (terminatedPodStatus) and
   * the listener may delete a deleted pod's object.
   */
  terminatePod(pod: Pod): void {
    const current = this.statuses.get(pod.metadata.uid ?? '');
    this.update(pod, terminatedPodStatus(pod, current?.status ?? pod.status ?? {}), true);
  }

  private update(pod: Pod, status: ApiPodStatus, finish: boolean): void {
    const uid = pod.metadata.uid ?? '';
    const old = this.statuses.get(uid);
    const before = old?.status ?? this.options.podManager?.mirrorPodOf(pod)?.status ?? pod.status ?? {};
    const illegal = checkContainerStateTransition(before, status, pod.spec);
    if (illegal) {
      this.options.logger?.error(
        { err: illegal, pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`, podUID: uid },
        'Status update on pod aborted',
      );
      return;
    }
    const podIsFinished = finish || old?.podIsFinished === true;
    if (old && (old.podIsFinished === true) === podIsFinished && isDeepStrictEqual(old.status, status)) return;
    this.statuses.set(uid, {
      status,
      version: (old?.version ?? 0) + 1,
      pendingSince: old?.pendingSince ?? this.now(),
      ...(podIsFinished ? { podIsFinished } : {}),
    });
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
