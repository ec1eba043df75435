/**
 * The pods a fault run keeps on its node, as static-pod manifests: mostly
 * long-running pods (one `sleep 3600` container; every tenth has two), and
 * one in twenty a pod that runs `true` once with restartPolicy Never (it must
 * end Succeeded and never run again). What each pod must look like after a
 * fault is derived from the same list.
 */
import { podManifest } from '../e2e/agent-harness.js';

export interface DesiredPod {
  /** The manifest's file and metadata name. */
  name: string;
  /** Long-running (must run once, never restart) or run-once (must end Succeeded and never run again). */
  kind: 'long' | 'once';
  containers: string[];
}

export interface Workload {
  namespace: string;
  pods: DesiredPod[];
}

export function makeWorkload(namespace: string, count: number): Workload {
  const pods: DesiredPod[] = [];
  for (let i = 0; i < count; i++) {
    const name = `p${String(i).padStart(4, '0')}`;
    if (i % 20 === 19) pods.push({ name, kind: 'once', containers: ['once'] });
    else pods.push({ name, kind: 'long', containers: i % 10 === 0 ? ['main', 'side'] : ['main'] });
  }
  return { namespace, pods };
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
