import type { KnownPodIds, PodStatus, RuntimePod } from './types.js';

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
   * With `known` (the ids the relist just listed for the pod) it reads those
   * objects' statuses directly instead of listing the pod's objects first
   * (upstream lists them with a uid filter); objects created after that list
   * are reported by the next relist.
   * With `previous` too (the pod's cached status), a sandbox or container
   * whose listed state equals its state in `previous` is not read again: a
   * status changes only with its state (created, running and exited statuses
   * are fixed once reached), so the cached one is still exact. Upstream reads
   * every object on every inspection.
   */
  getPodStatus(uid: string, name: string, namespace: string, known?: KnownPodIds, previous?: PodStatus): Promise<PodStatus>;
}
