/**
 * Pod QoS class and container OOM score adjustment (upstream
 * pkg/apis/core/v1/helper/qos ComputePodQOS/GetPodQOS and pkg/kubelet/qos
 * policy.go GetContainerOOMScoreAdjust). Pure.
 *
 * Inputs are expected to be API-defaulted (requests default to limits, see
 * src/main/podconfig/defaults.ts), as upstream assumes.
 */
import type { Container, Pod } from '../api/pod.js';
import { compareQuantities, parseQuantity, value, type Quantity } from '../api/quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** Only these resources decide the QoS class. */
const QOS_RESOURCES = new Set(['cpu', 'memory']);

export const GUARANTEED_OOM_SCORE_ADJ = -997;
export const BESTEFFORT_OOM_SCORE_ADJ = 1000;
/** Priority at or above which a pod counts as critical (scheduling.SystemCriticalPriority). */
const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

function add(a: Quantity | undefined, b: Quantity): Quantity {
  if (!a) return b;
  return { raw: '', format: b.format, num: a.num * b.den + b.num * a.den, den: a.den * b.den };
}

function isPositive(q: Quantity): boolean {
  return q.num > 0n;
}

/** Upstream ComputePodQOS over init and regular containers (pod-level resources not modelled). */
export function computePodQOS(pod: Pod): QOSClass {
  const requests = new Map<string, Quantity>();
  const limits = new Map<string, Quantity>();
  let guaranteed = true;
  for (const c of [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])]) {
    for (const [name, raw] of Object.entries(c.resources?.requests ?? {})) {
      if (!QOS_RESOURCES.has(name)) continue;
      const q = parseQuantity(raw);
      if (isPositive(q)) requests.set(name, add(requests.get(name), q));
    }
    const found = new Set<string>();
    for (const [name, raw] of Object.entries(c.resources?.limits ?? {})) {
      if (!QOS_RESOURCES.has(name)) continue;
      const q = parseQuantity(raw);
      if (!isPositive(q)) continue;
      found.add(name);
      limits.set(name, add(limits.get(name), q));
    }
    if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (!lim || compareQuantities(lim, req) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** Upstream GetPodQOS: status.qosClass when already set, else computed. */
export function getPodQOS(pod: Pod): QOSClass {
  const s = pod.status?.qosClass;
  if (s === 'Guaranteed' || s === 'Burstable' || s === 'BestEffort') return s;
  return computePodQOS(pod);
}

/**
 * Upstream types.IsCriticalPod && priorityClassName == system-node-critical.
 * Static pods (config.source not "api") and mirror pods count as critical.
 */
export function isNodeCriticalPod(pod: Pod): boolean {
  if (pod.spec.priorityClassName !== 'system-node-critical') return false;
  const ann = pod.metadata.annotations ?? {};
  const source = ann['kubernetes.io/config.source'];
  const isStatic = source !== undefined && source !== 'api';
  const isMirror = ann['kubernetes.io/config.mirror'] !== undefined;
  return isStatic || isMirror || (pod.spec.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
}

/**
 * Upstream GetContainerOOMScoreAdjust:
 *  node-critical or Guaranteed → -997; BestEffort → 1000;
 *  Burstable → 1000 - 1000*memoryRequest/memoryCapacity (integer division),
 *  clamped to at least 3 (1000 + -997) and, when it comes out 1000, 999.
 *  A capacity of 0 means unknown: Burstable containers then get 999.
 */
export function containerOOMScoreAdjust(pod: Pod, container: Container, memoryCapacityBytes: bigint): number {
  if (isNodeCriticalPod(pod)) return GUARANTEED_OOM_SCORE_ADJ;
  const qos = getPodQOS(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  const req = container.resources?.requests?.memory;
  const memoryRequest = req ? value(req) : 0n;
  const adj = memoryCapacityBytes > 0n ? Number(1000n - (1000n * memoryRequest) / memoryCapacityBytes) : 1000;
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}
