/**
 * Pod admission (upstream kubelet canAdmitPod with the predicate admit
 * handler, lifecycle/predicate.go, and the scheduler's noderesources fit
 * check it runs), and the status a rejected pod gets (upstream rejectPod).
 * Pure; called by HandlePodAdditions on the main thread, pods sorted by
 * creation time, with the pods admitted before as `activePods`.
 *
 * Checks, first failure wins: spec validity (FailedValidation), then pod
 * count (OutOfpods), cpu (OutOfcpu), memory (OutOfmemory), in the order
 * upstream reports insufficient resources.
 */
import type { Pod, PodStatus as ApiPodStatus } from '../../api/pod.js';
import { getPodQOS } from '../../workers/sync/qos.js';
import { rfc3339 } from '../status/generate-pod-status.js';
import { cpuMemory, podRequests, specProblems, type CpuMemory, type NodeResources } from './resources.js';

export { allocatable, podRequests, type NodeResources } from './resources.js';

/**
 * Reason for a pod whose spec cannot be admitted at all. Upstream admission
 * has none (the apiserver validates first); the kubelet uses this event
 * reason when it drops an invalid pod from a source.
 */
export const REASON_FAILED_VALIDATION = 'FailedValidation';

export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

export interface AdmitNode {
  allocatable: NodeResources;
}

/** Upstream InsufficientResourceError.Error(). */
function insufficient(resource: string, requested: bigint | number, used: bigint | number, capacity: bigint | number): AdmitResult {
  return {
    admit: false,
    reason: `OutOf${resource}`,
    message: `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  };
}

const isTerminalPhase = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/**
 * Whether `pod` fits next to `activePods` (the admitted, not yet terminated
 * pods; terminal-phase pods and the pod itself are ignored) within the
 * node's allocatable resources.
 */
export function canAdmitPod(pod: Pod, activePods: Pod[], node: AdmitNode): AdmitResult {
  const problems = specProblems(pod);
  if (problems.length > 0) {
    return { admit: false, reason: REASON_FAILED_VALIDATION, message: `Pod spec is invalid: ${problems.join('; ')}` };
  }
  const others = activePods.filter((p) => !isTerminalPhase(p) && p.metadata.uid !== pod.metadata.uid);
  const alloc = cpuMemory(node.allocatable);

  if (others.length + 1 > node.allocatable.pods) return insufficient('pods', 1, others.length, node.allocatable.pods);

  const want = podRequests(pod);
  if (want.milliCpu === 0n && want.memory === 0n) return { admit: true };
  const used = others.reduce<CpuMemory>(
    (acc, p) => {
      const r = requestsOrZero(p);
      return { milliCpu: acc.milliCpu + r.milliCpu, memory: acc.memory + r.memory };
    },
    { milliCpu: 0n, memory: 0n },
  );

  if (want.milliCpu > 0n && want.milliCpu > alloc.milliCpu - used.milliCpu) {
    return insufficient('cpu', want.milliCpu, used.milliCpu, alloc.milliCpu);
  }
  if (want.memory > 0n && want.memory > alloc.memory - used.memory) {
    return insufficient('memory', want.memory, used.memory, alloc.memory);
  }
  return { admit: true };
}

/**
 * Requests of already-admitted pods, memoized by spec object: every admission
 * sums all active pods, so without it a burst of N additions (a node boot)
 * parses N²/2 quantity sets on the main thread. Specs are replaced, never
 * mutated in place, when a pod changes (PodStorage assigns a new spec).
 */
const activeRequests = new WeakMap<object, CpuMemory>();

/** An admitted pod with a malformed quantity cannot be accounted; it counts as requesting nothing. */
function requestsOrZero(p: Pod): CpuMemory {
  const cached = activeRequests.get(p.spec);
  if (cached) return cached;
  let r: CpuMemory;
  try {
    r = podRequests(p);
  } catch {
    r = { milliCpu: 0n, memory: 0n };
  }
  activeRequests.set(p.spec, r);
  return r;
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
