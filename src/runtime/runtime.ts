import type { PodStatus, RuntimePod } from './types.js';

/**
 * The runtime layer over CRI (upstream kubecontainer.Runtime, the parts the
 * PLEG and pod workers need). Implementations: CriRuntime (src/runtime/
 * cri-runtime.ts) and FakeRuntime (test/fakes/fake-runtime.ts).
 *
 * Callers: worker-pool tasks (relist, inspect) and inline mode on the main
 * thread. Implementations hold no per-pod state between calls.
 */
export interface Runtime {
  /**
   * All pods the runtime has, built from ListPodSandbox + ListContainers and
   * grouped by the io.kubernetes.pod.uid label. Sandboxes/containers without
   * that label are not ours and are left out.
   */
  getPods(): Promise<RuntimePod[]>;

  /**
   * The full status of one pod: PodSandboxStatus of each of its sandboxes
   * (newest first) and ContainerStatus of each of its containers.
   * Throws CriError when a call fails; a pod that no longer exists yields a
   * status with no sandboxes and no containers (not an error).
   */
  getPodStatus(uid: string, name: string, namespace: string): Promise<PodStatus>;
}
