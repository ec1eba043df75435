/**
 * GET /runningpods/ (upstream Kubelet.GetRunningPods): the pods the runtime
 * runs, as kubecontainer.Pod.ToAPIPod makes them: name, namespace and uid,
 * and one container (name, image) per running container; pods with a ready
 * sandbox or a running container. Read from the shared pod status cache.
 */
import type { Pod } from '../../api/pod.js';
import type { PodStatus } from '../../runtime/types.js';

export function runningPodList(statuses: Iterable<PodStatus>): { kind: 'PodList'; apiVersion: 'v1'; metadata: object; items: Pod[] } {
  const items: Pod[] = [];
  for (const s of statuses) {
    const running = s.containerStatuses.filter((c) => c.state === 'running');
    if (running.length === 0 && !s.sandboxStatuses.some((sb) => sb.state === 'ready')) continue;
    items.push({
      metadata: { name: s.name, namespace: s.namespace, uid: s.uid, creationTimestamp: null },
      spec: { containers: running.map((c) => ({ name: c.name, image: c.image, resources: {} })) },
      status: {},
    });
  }
  return { kind: 'PodList', apiVersion: 'v1', metadata: {}, items };
}
