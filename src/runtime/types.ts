/**
 * The runtime layer's view of pods, independent of the CRI wire types.
 * Mirrors upstream kubecontainer.{Pod,PodStatus}. Timestamps from the runtime
 * are nanoseconds since the epoch as bigint (CRI int64; ~1.7e18 does not fit
 * a double exactly).
 */

export type SandboxState = 'ready' | 'notready';
export type ContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** Labels and annotations the kubelet writes and reads back (upstream contract). */
export const LABEL_POD_NAME = 'io.kubernetes.pod.name';
export const LABEL_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const LABEL_POD_UID = 'io.kubernetes.pod.uid';
export const LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';
export const ANNOTATION_CONTAINER_HASH = 'io.kubernetes.container.hash';
export const ANNOTATION_RESTART_COUNT = 'io.kubernetes.container.restartCount';
export const ANNOTATION_TERMINATION_GRACE = 'io.kubernetes.pod.terminationGracePeriod';
export const ANNOTATION_TERMINATION_MESSAGE_PATH = 'io.kubernetes.container.terminationMessagePath';
export const ANNOTATION_TERMINATION_MESSAGE_POLICY = 'io.kubernetes.container.terminationMessagePolicy';

export interface SandboxStatus {
  id: string;
  state: SandboxState;
  createdAt: bigint;
  attempt: number;
  /** Primary IP first. Empty for host-network sandboxes with no IP reported. */
  ips: string[];
  hostNetwork: boolean;
}

export interface ContainerStatus {
  id: string;
  name: string;
  state: ContainerState;
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  message: string;
  image: string;
  imageRef: string;
  /** From the io.kubernetes.container.restartCount annotation. */
  restartCount: number;
  /** From the io.kubernetes.container.hash annotation ('' when absent). */
  hash: string;
  sandboxId: string;
}

/** What the runtime knows about one pod at one moment (upstream kubecontainer.PodStatus). */
export interface PodStatus {
  uid: string;
  name: string;
  namespace: string;
  /** IPs of the newest ready sandbox. */
  ips: string[];
  /** Newest first. */
  sandboxStatuses: SandboxStatus[];
  containerStatuses: ContainerStatus[];
  /** When this status was observed, ms since the epoch (the cache timestamp). */
  timestamp: number;
}

/** How one container's state can only move: created → running → exited ('unknown' is ranked lowest). */
export const CONTAINER_STATE_RANK: Readonly<Record<ContainerState, number>> = { unknown: 0, created: 1, running: 2, exited: 3 };

/** The status lists a sandbox or a container: the pod has runtime state. */
export function hasRuntimeState(status: PodStatus): boolean {
  return status.sandboxStatuses.length > 0 || status.containerStatuses.length > 0;
}

/** A pod as seen by a runtime list (upstream kubecontainer.Pod): ids and states only. */
export interface RuntimePod {
  uid: string;
  name: string;
  namespace: string;
  sandboxes: { id: string; state: SandboxState; createdAt: bigint }[];
  containers: { id: string; name: string; state: ContainerState; hash: string; createdAt: bigint; sandboxId: string }[];
}

/** The ids a relist saw for one pod: inspection reads these directly instead of listing the pod again. */
export interface KnownPodIds {
  /** `state`: the listed state, which lets an inspection reuse an unchanged cached status (absent: read it). */
  sandboxes: { id: string; state?: SandboxState }[];
  containers: { id: string; sandboxId: string; state?: ContainerState }[];
}
