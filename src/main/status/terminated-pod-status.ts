/**
 * The final status of a pod whose termination has finished (upstream
 * status_manager.go TerminatePod): every container the runtime could not
 * account for counts as failed, and an API pod always ends in a terminal
 * phase, so a deleted pod that never started (still waiting on an image, a
 * configMap or a bad subPath) ends Failed and its object can be removed.
 * Static pods keep their phase (upstream's TODO #116484). Pure.
 */
import type { ContainerStatus, Pod, PodStatus } from '../../api/pod.js';
import { isStaticPod } from '../podconfig/types.js';

const UNKNOWN: NonNullable<ContainerStatus['state']> = {
  terminated: {
    reason: 'ContainerStatusUnknown',
    message: 'The container could not be located when the pod was terminated',
    exitCode: 137,
  },
};

/**
 * Upstream hasPodInitialized, which reads the pod's status from its source: no init containers, a
 * container that ever left waiting, or a last init container that exited 0.
 */
function hasPodInitialized(pod: Pod): boolean {
  if ((pod.spec.initContainers ?? []).length === 0) return true;
  if ((pod.status?.containerStatuses ?? []).some((s) => s.lastState?.terminated || !s.state?.waiting)) return true;
  const last = pod.status?.initContainerStatuses?.at(-1);
  return last?.lastState?.terminated?.exitCode === 0 || last?.state?.terminated?.exitCode === 0;
}

/** Upstream initializedContainers: all but the trailing run of never-started waiting ones (at least the first). */
function initializedCount(statuses: readonly ContainerStatus[]): number {
  for (let i = statuses.length - 1; i >= 0; i--) {
    if (!statuses[i].state?.waiting || statuses[i].lastState?.terminated) return i + 1;
  }
  return Math.min(1, statuses.length);
}

const terminate = (s: ContainerStatus): ContainerStatus => (s.state?.terminated ? s : { ...s, state: UNKNOWN });

export function terminatedPodStatus(pod: Pod, current: PodStatus): PodStatus {
  const status: PodStatus = structuredClone(current);
  if (hasPodInitialized(pod) && status.containerStatuses) status.containerStatuses = status.containerStatuses.map(terminate);
  if (status.initContainerStatuses) {
    const n = initializedCount(status.initContainerStatuses);
    status.initContainerStatuses = status.initContainerStatuses.map((s, i) => (i < n ? terminate(s) : s));
  }
  if (!isStaticPod(pod) && status.phase !== 'Succeeded' && status.phase !== 'Failed') status.phase = 'Failed';
  return status;
}
