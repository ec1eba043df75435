/**
 * Upstream status_manager.go checkContainerStateTransition (today's, with
 * sidecars): a container the status manager last reported terminated may not
 * be reported waiting or running again unless the pod's restart policy lets
 * it restart — Always, or OnFailure after a non-zero exit. A restartable init
 * container (a sidecar) may always restart. A status that breaks the rule
 * points at a stale runtime view (an older cache entry, a lost container) and
 * is dropped whole, so a Job controller never sees a finished container
 * running again. v1.20.2 has the same rule without the sidecar exemption.
 * Pure.
 */
import type { ContainerStatus, Pod, PodStatus } from '../../api/pod.js';

const terminatedFor = (
  olds: readonly ContainerStatus[],
  news: readonly ContainerStatus[],
  restartPolicy: string | undefined,
  restartable: (old: ContainerStatus, index: number) => boolean | string,
  what: string,
): string | undefined => {
  for (let i = 0; i < olds.length; i++) {
    const old = olds[i];
    const skip = restartable(old, i);
    if (typeof skip === 'string') return skip;
    if (skip) continue;
    const terminated = old.state?.terminated;
    if (!terminated) continue;
    if (terminated.exitCode !== 0 && restartPolicy === 'OnFailure') continue;
    for (const next of news) {
      if (next.name === old.name && !next.state?.terminated) {
        return `terminated ${what} ${old.name} attempted illegal transition to non-terminated state`;
      }
    }
  }
  return undefined;
};

/** The reason `next` may not follow `old` for a pod with this spec, or undefined when it may. */
export function checkContainerStateTransition(old: PodStatus, next: PodStatus, spec: Pod['spec']): string | undefined {
  const policy = spec.restartPolicy ?? 'Always';
  if (policy === 'Always') return undefined;
  const regular = terminatedFor(old.containerStatuses ?? [], next.containerStatuses ?? [], policy, () => false, 'container');
  if (regular) return regular;
  const inits = spec.initContainers ?? [];
  // upstream kubeutil.GetContainerByIndex: the old status lists init containers in spec order.
  return terminatedFor(
    old.initContainerStatuses ?? [],
    next.initContainerStatuses ?? [],
    policy,
    (s, i) => {
      const c = inits[i];
      if (!c || c.name !== s.name) return `found mismatch between pod spec and status, container: ${s.name}`;
      return c.restartPolicy === 'Always';
    },
    'init container',
  );
}
