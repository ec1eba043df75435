/**
 * The kubelet-owned pod conditions (upstream pkg/kubelet/status/generate.go
 * and the lastTransitionTime rule of the status manager). Pure functions of
 * the pod spec, the API container statuses (init and regular together) and
 * the phase.
 */
import type { Container, ContainerStatusV1, Pod, PodCondition, PodPhase, PodStatus as ApiPodStatus } from '../../api/pod.js';
import type { PodStatus as RuntimePodStatus } from '../../runtime/types.js';

export const POD_READY_TO_START_CONTAINERS = 'PodReadyToStartContainers';
export const POD_INITIALIZED = 'Initialized';
export const CONTAINERS_READY = 'ContainersReady';
export const POD_READY = 'Ready';
export const POD_SCHEDULED = 'PodScheduled';

/** Condition types the kubelet generates; every other condition on the pod is preserved as-is. */
export const KUBELET_OWNED_CONDITIONS: readonly string[] = [
  POD_SCHEDULED,
  POD_READY,
  POD_INITIALIZED,
  CONTAINERS_READY,
  POD_READY_TO_START_CONTAINERS,
];

export const REASON_UNKNOWN_CONTAINER_STATUSES = 'UnknownContainerStatuses';
export const REASON_POD_COMPLETED = 'PodCompleted';
export const REASON_POD_FAILED = 'PodFailed';
export const REASON_CONTAINERS_NOT_READY = 'ContainersNotReady';
export const REASON_CONTAINERS_NOT_INITIALIZED = 'ContainersNotInitialized';
export const REASON_READINESS_GATES_NOT_READY = 'ReadinessGatesNotReady';

import { isRestartableInitContainer } from '../../pod/init-containers.js';
export { isRestartableInitContainer };

/** Go's %s of a []string: `[a b]`. */
const goList = (names: string[]) => `[${names.join(' ')}]`;
const find = (statuses: ContainerStatusV1[], name: string) => statuses.find((s) => s.name === name);

/** Some regular container is running or has run (upstream HasAnyRegularContainerStarted). */
export function hasAnyRegularContainerStarted(pod: Pod, statuses: ContainerStatusV1[]): boolean {
  return (pod.spec.containers ?? []).some((c) => {
    const s = find(statuses, c.name);
    return s?.state?.running !== undefined || s?.state?.terminated !== undefined;
  });
}

/**
 * True when the newest sandbox can host containers (upstream
 * PodSandboxChanged returned false): exactly one ready sandbox, the newest,
 * with the pod's network mode and, off the host network, an IP.
 */
export function generatePodReadyToStartContainersCondition(pod: Pod, runtime: RuntimePodStatus | undefined): PodCondition {
  const sandboxes = runtime?.sandboxStatuses ?? [];
  const newest = sandboxes[0];
  const hostNetwork = pod.spec.hostNetwork === true;
  const ok =
    newest !== undefined &&
    sandboxes.filter((s) => s.state === 'ready').length <= 1 &&
    newest.state === 'ready' &&
    newest.hostNetwork === hostNetwork &&
    (hostNetwork || newest.ips.length > 0);
  return { type: POD_READY_TO_START_CONTAINERS, status: ok ? 'True' : 'False' };
}

export function generateContainersReadyCondition(pod: Pod, statuses: ContainerStatusV1[] | undefined, phase: PodPhase): PodCondition {
  if (!statuses) return { type: CONTAINERS_READY, status: 'False', reason: REASON_UNKNOWN_CONTAINER_STATUSES };
  const unknown: string[] = [];
  const unready: string[] = [];
  const check = (c: Container) => {
    const s = find(statuses, c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  };
  (pod.spec.initContainers ?? []).filter(isRestartableInitContainer).forEach(check);
  (pod.spec.containers ?? []).forEach(check);
  if (phase === 'Succeeded' && unknown.length === 0) {
    return { type: CONTAINERS_READY, status: 'False', reason: REASON_POD_COMPLETED };
  }
  if (phase === 'Failed') return { type: CONTAINERS_READY, status: 'False', reason: REASON_POD_FAILED };
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) messages.push(`containers with unready status: ${goList(unready)}`);
  if (messages.length > 0) {
    return { type: CONTAINERS_READY, status: 'False', reason: REASON_CONTAINERS_NOT_READY, message: messages.join(', ') };
  }
  return { type: CONTAINERS_READY, status: 'True' };
}

/** ContainersReady, then every readiness gate must have its condition True in `conditions`. */
export function generatePodReadyCondition(
  pod: Pod,
  conditions: PodCondition[],
  statuses: ContainerStatusV1[] | undefined,
  phase: PodPhase,
): PodCondition {
  const cr = generateContainersReadyCondition(pod, statuses, phase);
  if (cr.status !== 'True') {
    const out: PodCondition = { type: POD_READY, status: cr.status };
    if (cr.reason !== undefined) out.reason = cr.reason;
    if (cr.message !== undefined) out.message = cr.message;
    return out;
  }
  const gates = (pod.spec['readinessGates'] as { conditionType?: string }[] | undefined) ?? [];
  const messages: string[] = [];
  for (const gate of gates) {
    const type = gate.conditionType ?? '';
    const c = conditions.find((x) => x.type === type);
    if (!c) messages.push(`corresponding condition of pod readiness gate "${type}" does not exist.`);
    else if (c.status !== 'True') messages.push(`the status of pod readiness gate "${type}" is not "True", but ${c.status}`);
  }
  if (messages.length > 0) {
    return { type: POD_READY, status: 'False', reason: REASON_READINESS_GATES_NOT_READY, message: messages.join(', ') };
  }
  return { type: POD_READY, status: 'True' };
}

export function generatePodInitializedCondition(pod: Pod, statuses: ContainerStatusV1[] | undefined, phase: PodPhase): PodCondition {
  const inits = pod.spec.initContainers ?? [];
  if (!statuses && inits.length > 0) {
    return { type: POD_INITIALIZED, status: 'False', reason: REASON_UNKNOWN_CONTAINER_STATUSES };
  }
  const all = statuses ?? [];
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of inits) {
    const s = find(all, c.name);
    if (!s) unknown.push(c.name);
    else if (isRestartableInitContainer(c) ? s.started !== true : !s.ready) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) {
    return { type: POD_INITIALIZED, status: 'True', reason: REASON_POD_COMPLETED };
  }
  if (hasAnyRegularContainerStarted(pod, all)) return { type: POD_INITIALIZED, status: 'True' };
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length > 0) messages.push(`containers with incomplete status: ${goList(incomplete)}`);
  if (messages.length > 0) {
    return { type: POD_INITIALIZED, status: 'False', reason: REASON_CONTAINERS_NOT_INITIALIZED, message: messages.join(', ') };
  }
  return { type: POD_INITIALIZED, status: 'True' };
}

/**
 * Sets lastTransitionTime on the kubelet-owned conditions: kept from
 * `previous` when the status is unchanged, else `now` (RFC3339).
 */
export function setTransitionTimes(conditions: PodCondition[], previous: ApiPodStatus | undefined, now: string): void {
  for (const c of conditions) {
    if (!KUBELET_OWNED_CONDITIONS.includes(c.type)) continue;
    const old = previous?.conditions?.find((p) => p.type === c.type);
    c.lastTransitionTime = old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now;
  }
}
