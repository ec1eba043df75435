/**
 * Pod admission (upstream Kubelet.canAdmitPod over its admit handlers, in
 * their order) and the status a rejected pod gets (upstream rejectPod).
 * Pure; called by HandlePodAdditions on the main thread, pods sorted by
 * creation time, with the active pods admitted before.
 *
 * Checks, first failure wins (reason, then what decides):
 *  0. Evicted: the node has pressure conditions (the eviction manager's
 *     admit handler, upstream's first);
 *  1. SysctlForbidden: a sysctl off the safe allowlist, or a net/IPC sysctl
 *     with the host's namespace (sysctl allowlist handler);
 *  2. predicate handler: PodOSSelectorNodeLabelDoesNotMatch (the pod's
 *     kubernetes.io/os label), PodOSNotSupported (spec.os.name), then the
 *     scheduler's admission check: OutOfpods, OutOfcpu, OutOfmemory,
 *     OutOfephemeral-storage, OutOf<resource> for hugepages and extended
 *     resources the node has (ones it does not have are ignored, as
 *     upstream), NodeAffinity (nodeSelector and required node affinity
 *     against the node's labels), NodeName, NodePorts (hostPort conflicts);
 *  3. NodeShutdown while the node agent shuts down.
 * Before them all, kubelet-ts's one check of its own (upstream has no such
 * bound): TooManyContainers, a pod with more containers (init, regular and
 * ephemeral together) than --max-containers-per-pod.
 * A pod whose requests cannot be computed (a malformed quantity; source
 * validation normally stops it first) is UnexpectedAdmissionError.
 */
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import { milliValue, value } from '../../api/quantity.js';
import { getPodQOS } from '../../pod/qos.js';
import { rfc3339 } from '../status/generate-pod-status.js';
import { fitsHostPorts } from './host-ports.js';
import { matchesRequiredNodeAffinity } from './node-affinity.js';
import { podResourceRequests, type NodeResources, type ResourceAmounts } from './resources.js';
import { forbiddenSysctl, SYSCTL_FORBIDDEN_REASON } from './sysctls.js';
import { errorMessage } from '../../common/error-message.js';

export { allocatable, podRequests, type NodeResources } from './resources.js';

export const LABEL_OS = 'kubernetes.io/os';
/** The node's OS as Go names it (runtime.GOOS). */
export const NODE_OS = 'linux';

export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

export interface AdmitNode {
  allocatable: NodeResources;
  /** Node name (spec.nodeName and matchFields metadata.name); default: no name check. */
  name?: string;
  /** Node labels (kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch, --node-labels). */
  labels?: Record<string, string>;
  /** The sysctls pods may set (safeSysctlAllowlist of the running kernel); default: any. */
  sysctlAllowlist?: readonly string[];
  /** True while the node agent shuts down. */
  shuttingDown?: () => boolean;
  /** The eviction manager's verdict under node pressure; default: no pressure. */
  pressure?: (pod: Pod) => AdmitResult;
  /** --max-containers-per-pod; 0 or unset = no limit. */
  maxContainersPerPod?: number;
}

export const TOO_MANY_CONTAINERS_REASON = 'TooManyContainers';

/** The pod's init, regular and ephemeral containers, against the node's limit. */
function tooManyContainers(pod: Pod, limit: number | undefined): AdmitResult | undefined {
  if (!limit) return undefined;
  const ephemeral = (pod.spec['ephemeralContainers'] as unknown[] | undefined)?.length ?? 0;
  const count = pod.spec.containers.length + (pod.spec.initContainers?.length ?? 0) + ephemeral;
  if (count <= limit) return undefined;
  return {
    admit: false,
    reason: TOO_MANY_CONTAINERS_REASON,
    message: `the pod has ${count} containers (init, regular and ephemeral), over this node's limit of ${limit} (--max-containers-per-pod; 0 = no limit)`,
  };
}

/** Upstream InsufficientResourceError.Error(). */
function insufficient(resource: string, requested: bigint | number, used: bigint | number, capacity: bigint | number): AdmitResult {
  return {
    admit: false,
    reason: `OutOf${resource}`,
    message: `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  };
}

/** Upstream PredicateFailureError.Error(). */
function predicate(name: string, desc: string): AdmitResult {
  return { admit: false, reason: name, message: `Predicate ${name} failed: ${desc}` };
}

/** Native resources upstream checks by name; anything else with a slash (not kubernetes.io/) is an extended resource. */
const isExtendedResource = (name: string) => name.includes('/') && !name.startsWith('kubernetes.io/') && !name.startsWith('requests.');

const allocatableMemo = new WeakMap<NodeResources, ResourceAmounts>();

/** Allocatable amounts in the units of ResourceAmounts (cpu milli, others whole); parsed once per allocatable object. */
function allocatableAmounts(a: NodeResources): ResourceAmounts {
  const cached = allocatableMemo.get(a);
  if (cached) return cached;
  const out: ResourceAmounts = { cpu: milliValue(a.cpu), memory: value(a.memory) };
  if (a['ephemeral-storage'] !== undefined) out['ephemeral-storage'] = value(a['ephemeral-storage']);
  for (const [k, v] of Object.entries(a.scalar ?? {})) out[k] = value(v);
  allocatableMemo.set(a, out);
  return out;
}

/**
 * Requests of already-admitted pods, memoized by spec object: every admission
 * sums all active pods, so without it a burst of N additions (a node boot)
 * parses N²/2 quantity sets on the main thread. Specs are replaced, never
 * mutated in place, when a pod changes (PodStorage assigns a new spec).
 */
const activeRequests = new WeakMap<object, ResourceAmounts>();

/** An admitted pod with a malformed quantity cannot be accounted; it counts as requesting nothing. */
function requestsOrZero(p: Pod): ResourceAmounts {
  const cached = activeRequests.get(p.spec);
  if (cached) return cached;
  let r: ResourceAmounts;
  try {
    r = podResourceRequests(p);
  } catch {
    r = {};
  }
  activeRequests.set(p.spec, r);
  return r;
}

/** Upstream noderesources.Fits, in its order: pods, cpu, memory, ephemeral-storage, then the other resources. */
function fitsResources(want: ResourceAmounts, others: Pod[], node: AdmitNode): AdmitResult {
  const podsCap = node.allocatable.pods;
  if (others.length + 1 > podsCap) return insufficient('pods', 1, others.length, podsCap);
  const alloc = allocatableAmounts(node.allocatable);
  const names = Object.keys(want).filter((k) => want[k] > 0n && (!isExtendedResource(k) || alloc[k] !== undefined));
  if (names.length === 0) return { admit: true };
  // Only the resources this pod asks for are summed over the other pods (a node boot admits N pods against up to N).
  const used: ResourceAmounts = {};
  for (const name of names) used[name] = 0n;
  for (const p of others) {
    const r = requestsOrZero(p);
    for (const name of names) {
      const v = r[name];
      if (v !== undefined) used[name] += v;
    }
  }
  const order = ['cpu', 'memory', 'ephemeral-storage', ...names.filter((n) => !['cpu', 'memory', 'ephemeral-storage'].includes(n)).sort()];
  for (const name of order) {
    const w = want[name] ?? 0n;
    if (w <= 0n) continue;
    // ephemeral-storage is only checked when the node's capacity is known.
    if (name === 'ephemeral-storage' && alloc[name] === undefined) continue;
    if (isExtendedResource(name) && alloc[name] === undefined) continue;
    const cap = alloc[name] ?? 0n;
    const u = used[name] ?? 0n;
    if (w > cap - u) return insufficient(name, w, u, cap);
  }
  return { admit: true };
}

/**
 * Whether `pod` may run next to `activePods` (the admitted pods that still
 * count: see HandlePodAdditions' filterOutInactivePods; the pod itself is
 * ignored among them).
 */
export function canAdmitPod(pod: Pod, activePods: Pod[], node: AdmitNode): AdmitResult {
  const tooMany = tooManyContainers(pod, node.maxContainersPerPod);
  if (tooMany) return tooMany;
  const pressure = node.pressure?.(pod);
  if (pressure && !pressure.admit) return pressure;
  if (node.sysctlAllowlist) {
    const bad = forbiddenSysctl(pod, node.sysctlAllowlist);
    if (bad) return { admit: false, reason: SYSCTL_FORBIDDEN_REASON, message: bad };
  }

  const labels = { ...(node.labels ?? {}) };
  if (labels[LABEL_OS] !== NODE_OS) labels[LABEL_OS] = NODE_OS;
  const podOS = pod.metadata.labels?.[LABEL_OS];
  if (podOS !== undefined && podOS !== labels[LABEL_OS]) {
    return {
      admit: false,
      reason: 'PodOSSelectorNodeLabelDoesNotMatch',
      message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    };
  }
  const osField = (pod.spec['os'] as { name?: string } | undefined)?.name;
  if (osField !== undefined && osField !== NODE_OS) {
    return { admit: false, reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" };
  }

  const others = activePods.filter((p) => p.metadata.uid !== pod.metadata.uid);
  let want: ResourceAmounts;
  try {
    want = podResourceRequests(pod);
  } catch (err) {
    return {
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: `Unexpected error while computing the pod's resource requests: ${errorMessage(err)}`,
    };
  }
  const fits = fitsResources(want, others, node);
  if (!fits.admit) return fits;
  if (node.labels && !matchesRequiredNodeAffinity(pod, { name: node.name ?? '', labels })) {
    return predicate('NodeAffinity', "node(s) didn't match Pod's node affinity/selector");
  }
  if (node.name !== undefined && pod.spec.nodeName && pod.spec.nodeName !== node.name) {
    return predicate('NodeName', "node(s) didn't match the requested node name");
  }
  if (!fitsHostPorts(pod, others)) return predicate('NodePorts', "node(s) didn't have free ports for the requested pod ports");

  if (node.shuttingDown?.()) return { admit: false, reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.' };
  return { admit: true };
}

export interface PodActivity {
  /** The pod worker has seen termination complete (upstream IsPodKnownTerminated). */
  isKnownTerminated(uid: string): boolean;
  /** Termination was requested (upstream IsPodTerminationRequested). */
  isTerminationRequested(uid: string): boolean;
  /** The status the kubelet last generated for the pod (the status manager). */
  statusOf(uid: string): ApiPodStatus | undefined;
}

const terminalPhase = (phase: string | undefined) => phase === 'Succeeded' || phase === 'Failed';

/**
 * Upstream filterOutInactivePods with isAdmittedPodTerminal: a pod stops
 * counting once its worker saw it terminated, or as soon as it is terminal
 * (the source's phase, or the phase the status manager holds, e.g. a
 * rejected pod) unless it is still terminating.
 */
export function filterOutInactivePods(pods: Pod[], activity: PodActivity): Pod[] {
  return pods.filter((p) => {
    const uid = p.metadata.uid ?? '';
    if (activity.isKnownTerminated(uid)) return false;
    const terminal = terminalPhase(p.status?.phase) || terminalPhase(activity.statusOf(uid)?.phase);
    return !(terminal && !activity.isTerminationRequested(uid));
  });
}

/** The status of a pod the kubelet refused to run (upstream rejectPod): phase Failed, never retried. */
export function rejectedPodStatus(pod: Pod, reason: string, message: string, now: number): ApiPodStatus {
  let qosClass: string | undefined;
  try {
    qosClass = getPodQOS(pod);
  } catch {
    qosClass = undefined;
  }
  const status: ApiPodStatus = { phase: 'Failed', reason, message: `Pod was rejected: ${message}`, startTime: rfc3339(now) };
  if (qosClass) status.qosClass = qosClass;
  return status;
}
