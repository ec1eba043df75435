/**
 * Restart-policy helpers over the runtime PodStatus (upstream
 * pkg/kubelet/container/helpers.go ShouldContainerBeRestarted and the small
 * predicates kuberuntime_manager.go uses). Shared by computePodActions and the
 * v1 status generator, so both agree on what "will be restarted" means.
 *
 * All functions are pure. Runtime container statuses are matched by name; when
 * several instances of one container exist (earlier restarts not yet garbage
 * collected) the newest by `createdAt` is "the" status, as upstream's
 * FindContainerStatusByName relies on newest-first order.
 */
import type { Container, Pod } from '../api/pod.js';
import type { ContainerStatus, PodStatus } from '../runtime/types.js';

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

/** The pod's restart policy; unset (not defaulted) reads as `Always`, the API default. */
export function podRestartPolicy(pod: Pod): RestartPolicy {
  const p = pod.spec.restartPolicy;
  return p === 'OnFailure' || p === 'Never' ? p : 'Always';
}

/** Upstream shouldRestartOnFailure: anything but `Never`. */
export function shouldRestartOnFailure(pod: Pod): boolean {
  return podRestartPolicy(pod) !== 'Never';
}

/** The newest runtime status of the container called `name`, or undefined. */
export function findLatestContainerStatus(status: PodStatus, name: string): ContainerStatus | undefined {
  let best: ContainerStatus | undefined;
  for (const c of status.containerStatuses) {
    if (c.name !== name) continue;
    if (!best || c.createdAt > best.createdAt) best = c;
  }
  return best;
}

/** Every runtime status of the container called `name`, newest first. */
export function findContainerStatuses(status: PodStatus, name: string): ContainerStatus[] {
  return status.containerStatuses
    .filter((c) => c.name === name)
    .sort((a, b) => (a.createdAt === b.createdAt ? 0 : a.createdAt > b.createdAt ? -1 : 1));
}

/** The newest *exited* instance of the container (what crash-loop backoff measures from). */
export function findLatestExitedStatus(status: PodStatus, name: string): ContainerStatus | undefined {
  return findContainerStatuses(status, name).find((c) => c.state === 'exited');
}

/** Upstream containerSucceeded: the newest instance exited with code 0. */
export function containerSucceeded(container: Pick<Container, 'name'>, status: PodStatus): boolean {
  const c = findLatestContainerStatus(status, container.name);
  return c !== undefined && c.state === 'exited' && c.exitCode === 0;
}

/**
 * Upstream isInitContainerFailed: OOM-killed, exited non-zero, or in unknown
 * state (it may or may not have run; treat as failed so it is killed and rerun).
 */
export function isInitContainerFailed(c: ContainerStatus): boolean {
  if (c.reason === 'OOMKilled') return true;
  if (c.state === 'exited' && c.exitCode !== 0) return true;
  return c.state === 'unknown';
}

/**
 * Upstream ShouldContainerBeRestarted: whether a container that is not running
 * should be (re)started now, judged by its newest instance.
 *  - the pod is being deleted (metadata.deletionTimestamp) → no
 *  - never ran (or every instance was garbage collected) → yes
 *  - running → no
 *  - created-but-not-started or unknown → yes
 *  - exited: Never → no; OnFailure → only if the exit code was non-zero; Always → yes
 */
export function shouldContainerBeRestarted(
  container: Pick<Container, 'name'>,
  podStatus: PodStatus,
  restartPolicy: RestartPolicy,
  deleting = false,
): boolean {
  if (deleting) return false;
  const c = findLatestContainerStatus(podStatus, container.name);
  if (!c) return true;
  if (c.state === 'running') return false;
  if (c.state === 'unknown' || c.state === 'created') return true;
  if (restartPolicy === 'Never') return false;
  if (restartPolicy === 'OnFailure' && c.exitCode === 0) return false;
  return true;
}

/** shouldContainerBeRestarted with the pod's own policy and deletion state. */
export function shouldPodContainerBeRestarted(pod: Pod, container: Pick<Container, 'name'>, podStatus: PodStatus): boolean {
  return shouldContainerBeRestarted(container, podStatus, podRestartPolicy(pod), !!pod.metadata.deletionTimestamp);
}
