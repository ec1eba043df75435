/**
 * spec.activeDeadlineSeconds (upstream pkg/kubelet/active_deadline.go): once
 * a pod has been active on the node for that long, counted from its status
 * startTime, it fails with reason DeadlineExceeded and is killed. The check
 * is both a sync-loop handler (the 1 s sync tick syncs such pods) and an
 * eviction check in status generation. Pure; main thread.
 */
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';

export const DEADLINE_EXCEEDED_REASON = 'DeadlineExceeded';
export const DEADLINE_EXCEEDED_MESSAGE = 'Pod was active on the node longer than the specified deadline';

/**
 * Upstream pastActiveDeadline: the deadline is set, the pod has a start time
 * (from the kubelet's own status, else the pod's), and now - startTime >= deadline.
 */
export function pastActiveDeadline(pod: Pod, kubeletStatus: ApiPodStatus | undefined, now: number): boolean {
  const deadline = pod.spec.activeDeadlineSeconds;
  if (deadline == null) return false;
  const start = (kubeletStatus ?? pod.status)?.startTime;
  if (!start) return false;
  const startMs = Date.parse(start);
  if (Number.isNaN(startMs)) return false;
  return now - startMs >= deadline * 1000;
}

/** Upstream ShouldEvict of the active deadline handler: the eviction to apply, if any. */
export function activeDeadlineEviction(
  pod: Pod,
  kubeletStatus: ApiPodStatus | undefined,
  now: number,
): { reason: string; message: string } | undefined {
  return pastActiveDeadline(pod, kubeletStatus, now) ? { reason: DEADLINE_EXCEEDED_REASON, message: DEADLINE_EXCEEDED_MESSAGE } : undefined;
}
