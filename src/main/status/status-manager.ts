/**
 * The status manager (upstream pkg/kubelet/status, local part): the latest
 * v1 PodStatus the kubelet computed for each pod, which /pods serves and the
 * apiserver sync (a later issue) will push. Main thread only.
 */
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';

export class StatusManager {
  private readonly statuses = new Map<string, ApiPodStatus>();

  setPodStatus(pod: Pod, status: ApiPodStatus): void {
    this.statuses.set(pod.metadata.uid ?? '', status);
  }

  getPodStatus(uid: string): ApiPodStatus | undefined {
    return this.statuses.get(uid);
  }

  removePodStatus(uid: string): void {
    this.statuses.delete(uid);
  }

  /** Drops statuses of pods that are neither desired nor known to the pod workers. */
  removeOrphanedStatuses(keep: (uid: string) => boolean): void {
    for (const uid of this.statuses.keys()) if (!keep(uid)) this.statuses.delete(uid);
  }
}
