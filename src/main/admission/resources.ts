/**
 * Pod and node resource arithmetic for admission: a pod's effective cpu and
 * memory requests (upstream resourcehelper.PodRequests) and node allocatable
 * (capacity minus kube/system reservations and the hard memory eviction
 * threshold). CPU is in millicores, memory in bytes, both bigint.
 *
 * Requests are read as given: API defaulting (requests default to limits,
 * src/main/podconfig/defaults.ts) is assumed to have run, as upstream does.
 */
import type { Pod, ResourceList } from '../../api/pod.js';
import { milliValue, value } from '../../api/quantity.js';

export interface CpuMemory {
  milliCpu: bigint;
  memory: bigint;
}

/** cpu and memory of a resource list; throws QuantityParseError on a malformed quantity. */
export function cpuMemory(list: { readonly cpu?: string; readonly memory?: string } | ResourceList | undefined): CpuMemory {
  const cpu = list?.['cpu'];
  const memory = list?.['memory'];
  return { milliCpu: cpu !== undefined ? milliValue(cpu) : 0n, memory: memory !== undefined ? value(memory) : 0n };
}

/** Amounts by resource name: cpu in millicores, everything else in whole units (bytes, counts). */
export type ResourceAmounts = Record<string, bigint>;

function amounts(list: ResourceList | undefined): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const [name, raw] of Object.entries(list ?? {})) out[name] = name === 'cpu' ? milliValue(raw) : value(raw);
  return out;
}
const addAll = (a: ResourceAmounts, b: ResourceAmounts): ResourceAmounts => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0n) + v;
  return out;
};
const maxAll = (a: ResourceAmounts, b: ResourceAmounts): ResourceAmounts => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) if (out[k] === undefined || v > out[k]) out[k] = v;
  return out;
};

/**
 * The pod's effective request of every resource (upstream
 * resourcehelper.PodRequests): the sum over regular containers and sidecars
 * (restartable init containers), or, if larger per resource, what the
 * busiest init container needs together with the sidecars started before it;
 * plus spec.overhead. Throws QuantityParseError on a malformed quantity.
 */
export function podResourceRequests(pod: Pod): ResourceAmounts {
  let reqs = (pod.spec.containers ?? []).map((c) => amounts(c.resources?.requests)).reduce(addAll, {});
  let sidecars: ResourceAmounts = {};
  let initMax: ResourceAmounts = {};
  for (const c of pod.spec.initContainers ?? []) {
    const r = amounts(c.resources?.requests);
    if (c.restartPolicy === 'Always') {
      reqs = addAll(reqs, r);
      sidecars = addAll(sidecars, r);
      initMax = maxAll(initMax, sidecars);
    } else {
      initMax = maxAll(initMax, addAll(r, sidecars));
    }
  }
  return addAll(maxAll(reqs, initMax), amounts(pod.spec['overhead']));
}

/** cpu and memory of podResourceRequests. */
export function podRequests(pod: Pod): CpuMemory {
  const r = podResourceRequests(pod);
  return { milliCpu: r['cpu'] ?? 0n, memory: r['memory'] ?? 0n };
}

export interface NodeResources {
  cpu: string;
  memory: string;
  pods: number;
  /** Bytes of the node filesystem; absent when unknown (then ephemeral-storage requests are not checked). */
  'ephemeral-storage'?: string;
  /** Other resources the node has (hugepages-*, device-plugin resources), by name. */
  scalar?: Record<string, string>;
}

/** A hard eviction threshold (quantity or percentage of capacity) in bytes. */
function threshold(raw: string | undefined, capacity: bigint): bigint {
  if (!raw) return 0n;
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(raw);
  return pct ? BigInt(Math.floor((Number(capacity) * Number(pct[1])) / 100)) : value(raw);
}

/**
 * Node allocatable (upstream GetNodeAllocatableReservation): capacity minus
 * systemReserved, kubeReserved and the hard eviction threshold of the
 * resource (`memory.available` for memory, `nodefs.available` for
 * ephemeral-storage; a quantity or a percentage of capacity); never below
 * zero. Returns cpu in millicores ("3500m"), memory and ephemeral-storage in
 * bytes; other resources unchanged.
 */
export function allocatable(
  capacity: NodeResources,
  systemReserved: Record<string, string> = {},
  kubeReserved: Record<string, string> = {},
  evictionHardMemory?: string,
  evictionHardNodefs?: string,
): NodeResources {
  const clamp = (v: bigint) => (v < 0n ? 0n : v);
  const reserved = (name: string) =>
    amounts({ [name]: systemReserved[name] ?? '0' })[name] + amounts({ [name]: kubeReserved[name] ?? '0' })[name];
  const cap = cpuMemory(capacity);
  const out: NodeResources = {
    cpu: `${clamp(cap.milliCpu - reserved('cpu'))}m`,
    memory: `${clamp(cap.memory - reserved('memory') - threshold(evictionHardMemory, cap.memory))}`,
    pods: capacity.pods,
  };
  const eph = capacity['ephemeral-storage'];
  if (eph !== undefined) {
    const total = value(eph);
    out['ephemeral-storage'] = `${clamp(total - reserved('ephemeral-storage') - threshold(evictionHardNodefs, total))}`;
  }
  if (capacity.scalar) out.scalar = { ...capacity.scalar };
  return out;
}
