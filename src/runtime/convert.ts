/**
 * Conversions from CRI wire types to the runtime layer's types. Pure
 * functions; shared by CriRuntime and the relist task.
 */
import {
  ContainerState as CriContainerState,
  NamespaceMode,
  PodSandboxState,
  type ContainerStatus as CriContainerStatus,
  type PodSandboxStatus,
} from '../gen/runtime/v1/api.js';
import type { ListedContainer, ListedSandbox } from './relist-wire.js';
import {
  ANNOTATION_CONTAINER_HASH,
  ANNOTATION_RESTART_COUNT,
  LABEL_CONTAINER_NAME,
  type ContainerState,
  type ContainerStatus,
  type RuntimePod,
  type SandboxState,
  type SandboxStatus,
} from './types.js';

export function containerState(s: CriContainerState): ContainerState {
  switch (s) {
    case CriContainerState.CONTAINER_CREATED:
      return 'created';
    case CriContainerState.CONTAINER_RUNNING:
      return 'running';
    case CriContainerState.CONTAINER_EXITED:
      return 'exited';
    default:
      return 'unknown';
  }
}

export function sandboxState(s: PodSandboxState): SandboxState {
  return s === PodSandboxState.SANDBOX_READY ? 'ready' : 'notready';
}

function restartCount(annotations: Record<string, string>): number {
  const n = Number.parseInt(annotations[ANNOTATION_RESTART_COUNT] ?? '0', 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

export function toSandboxStatus(s: PodSandboxStatus): SandboxStatus {
  const ips: string[] = [];
  if (s.network?.ip) ips.push(s.network.ip);
  for (const extra of s.network?.additionalIps ?? []) if (extra.ip) ips.push(extra.ip);
  return {
    id: s.id,
    state: sandboxState(s.state),
    createdAt: s.createdAt,
    attempt: s.metadata?.attempt ?? 0,
    ips,
    hostNetwork: s.linux?.namespaces?.options?.network === NamespaceMode.NODE,
  };
}

export function toContainerStatus(s: CriContainerStatus, sandboxId: string): ContainerStatus {
  return {
    id: s.id,
    name: s.metadata?.name ?? s.labels[LABEL_CONTAINER_NAME] ?? '',
    state: containerState(s.state),
    createdAt: s.createdAt,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    exitCode: s.exitCode,
    reason: s.reason,
    message: s.message,
    image: s.image?.image ?? '',
    imageRef: s.imageRef,
    restartCount: restartCount(s.annotations),
    hash: s.annotations[ANNOTATION_CONTAINER_HASH] ?? '',
    sandboxId,
  };
}

/** Newest first, as upstream sorts sandbox statuses. */
export function newestFirst<T extends { createdAt: bigint }>(a: T, b: T): number {
  return a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0;
}

/**
 * `known` with each object of `later` it lacks (only those created after `createdAfter`, in ns, when given) and,
 * for those it has, `later`'s where that shows it further on (`rank`: an object's state only moves up), newest
 * first; undefined when nothing changes.
 */
export function withLaterStates<T extends { id: string; createdAt: bigint }>(
  known: readonly T[],
  later: readonly T[],
  rank: (s: T) => number,
  createdAfter?: bigint,
): T[] | undefined {
  const ids = new Set(known.map((s) => s.id));
  const added = later.filter((s) => !ids.has(s.id) && (createdAfter === undefined || s.createdAt > createdAfter));
  const laterById = new Map(later.map((s) => [s.id, s]));
  let advanced = false;
  const kept = known.map((s) => {
    const seen = laterById.get(s.id);
    if (!seen || rank(seen) <= rank(s)) return s;
    advanced = true;
    return seen;
  });
  return added.length > 0 || advanced ? [...added, ...kept].sort(newestFirst) : undefined;
}

/**
 * Groups listed sandboxes and containers into pods by the pod UID label
 * (upstream kubeGenericRuntimeManager.GetPods). Takes the relist's partial
 * decode (relist-wire.ts); items without a pod UID label are not ours.
 */
export function groupPods(sandboxes: readonly ListedSandbox[], containers: readonly ListedContainer[]): RuntimePod[] {
  const pods = new Map<string, RuntimePod>();
  const podFor = (uid: string | undefined, name: string | undefined, namespace: string | undefined): RuntimePod | undefined => {
    if (!uid) return undefined;
    let pod = pods.get(uid);
    if (!pod) {
      pod = { uid, name: name ?? '', namespace: namespace ?? '', sandboxes: [], containers: [] };
      pods.set(uid, pod);
    }
    return pod;
  };
  for (const s of sandboxes) {
    podFor(s.podUid, s.podName, s.podNamespace)?.sandboxes.push({ id: s.id, state: sandboxState(s.state), createdAt: s.createdAt });
  }
  for (const c of containers) {
    podFor(c.podUid, c.podName, c.podNamespace)?.containers.push({
      id: c.id,
      name: c.metadataName ?? c.containerName ?? '',
      state: containerState(c.state),
      hash: c.hash ?? '',
      createdAt: c.createdAt,
      sandboxId: c.podSandboxId,
    });
  }
  for (const p of pods.values()) p.sandboxes.sort(newestFirst);
  return [...pods.values()];
}
