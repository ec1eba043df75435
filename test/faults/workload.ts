/**
 * The pods a fault run keeps on its node: mostly long-running pods (one
 * `sleep 3600` container; every tenth has two), and one in twenty a pod that
 * runs `true` once with restartPolicy Never (it must end Succeeded and never
 * run again). They are static-pod manifests, or pods in the apiserver bound to
 * the node (spec.nodeName) when the fault is about the apiserver. What each pod
 * must look like after a fault is derived from the same list; a fault that
 * deletes pods marks them `gone` (nothing of theirs may run, and their objects
 * must leave the apiserver).
 */
import { podManifest } from '../e2e/agent-harness.js';

export interface DesiredPod {
  /** The manifest's file and metadata name. */
  name: string;
  /** Long-running (must run once, never restart), run-once (must end Succeeded and never run again), or deleted by the fault. */
  kind: 'long' | 'once' | 'gone';
  containers: string[];
}

export interface Workload {
  namespace: string;
  pods: DesiredPod[];
  /** Static-pod manifests (default) or pods from the apiserver. */
  source?: 'static' | 'api';
}

export function makeWorkload(namespace: string, count: number, source: 'static' | 'api' = 'static'): Workload {
  const pods: DesiredPod[] = [];
  for (let i = 0; i < count; i++) {
    const name = `p${String(i).padStart(4, '0')}`;
    if (i % 20 === 19) pods.push({ name, kind: 'once', containers: ['once'] });
    else pods.push({ name, kind: 'long', containers: i % 10 === 0 ? ['main', 'side'] : ['main'] });
  }
  return { namespace, pods, source };
}

/** The pod's name as the kubelet labels it in the runtime: a static pod's carries `-<node>`. */
export function runtimePodName(workload: Workload, name: string, node: string): string {
  return workload.source === 'api' ? name : `${name}-${node}`;
}

export function manifestOf(pod: DesiredPod, namespace: string): Record<string, unknown> {
  if (pod.kind === 'once') return podManifest(pod.name, namespace, [{ name: 'once', command: ['true'] }], { restartPolicy: 'Never' });
  return podManifest(
    pod.name,
    namespace,
    pod.containers.map((name) => ({ name, command: ['sleep', '3600'] })),
    { grace: 1 },
  );
}

/** The workload as a v1 List of pods bound to `node`, for `kubectl apply` (no service account token volume). */
export function apiPodList(workload: Workload, node: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: workload.pods.map((p) => {
      const m = manifestOf(p, workload.namespace) as { spec: Record<string, unknown> };
      return { ...m, spec: { ...m.spec, nodeName: node, automountServiceAccountToken: false } };
    }),
  };
}
