/**
 * Pod and node resource arithmetic for admission: a pod's effective cpu and
 * memory requests (upstream resourcehelper.PodRequests) and node allocatable
 * (capacity minus kube/system reservations and the hard memory eviction
 * threshold). CPU is in millicores, memory in bytes, both bigint.
 *
 * Requests are read as given: API defaulting (requests default to limits,
 * src/main/podconfig/defaults.ts) is assumed to have run, as upstream does.
 */
import type { Container, Pod, ResourceList } from '../../api/pod.js';
import { milliValue, parseQuantity, value } from '../../api/quantity.js';

export interface CpuMemory {
  milliCpu: bigint;
  memory: bigint;
}

const ZERO: CpuMemory = { milliCpu: 0n, memory: 0n };
const add = (a: CpuMemory, b: CpuMemory): CpuMemory => ({ milliCpu: a.milliCpu + b.milliCpu, memory: a.memory + b.memory });
const max = (a: CpuMemory, b: CpuMemory): CpuMemory => ({
  milliCpu: a.milliCpu > b.milliCpu ? a.milliCpu : b.milliCpu,
  memory: a.memory > b.memory ? a.memory : b.memory,
});

/** cpu and memory of a resource list; throws QuantityParseError on a malformed quantity. */
export function cpuMemory(list: { readonly cpu?: string; readonly memory?: string } | ResourceList | undefined): CpuMemory {
  const cpu = list?.['cpu'];
  const memory = list?.['memory'];
  return { milliCpu: cpu !== undefined ? milliValue(cpu) : 0n, memory: memory !== undefined ? value(memory) : 0n };
}

const requestsOf = (c: Container) => cpuMemory(c.resources?.requests);

/**
 * The pod's effective request: the sum over regular containers and sidecars
 * (restartable init containers), or, if larger per resource, what the
 * busiest init container needs together with the sidecars started before it;
 * plus spec.overhead.
 */
export function podRequests(pod: Pod): CpuMemory {
  let reqs = (pod.spec.containers ?? []).map(requestsOf).reduce(add, ZERO);
  let sidecars = ZERO;
  let initMax = ZERO;
  for (const c of pod.spec.initContainers ?? []) {
    const r = requestsOf(c);
    if (c.restartPolicy === 'Always') {
      reqs = add(reqs, r);
      sidecars = add(sidecars, r);
      initMax = max(initMax, sidecars);
    } else {
      initMax = max(initMax, add(r, sidecars));
    }
  }
  reqs = max(reqs, initMax);
  return add(reqs, cpuMemory(pod.spec['overhead']));
}

/**
 * Problems that make a pod unadmittable regardless of node capacity, as
 * API-validation style messages: container names duplicated across init and
 * regular containers, malformed or negative quantities. Empty when valid.
 */
export function specProblems(pod: Pod): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const check = (path: string, list: ResourceList | undefined) => {
    for (const [name, raw] of Object.entries(list ?? {})) {
      try {
        if (parseQuantity(raw).num < 0n) problems.push(`${path}[${name}]: Invalid value: "${raw}": must be greater than or equal to 0`);
      } catch (e) {
        problems.push(`${path}[${name}]: Invalid value: "${raw}": ${(e as Error).message}`);
      }
    }
  };
  for (const [field, list] of [
    ['initContainers', pod.spec.initContainers],
    ['containers', pod.spec.containers],
  ] as const) {
    (list ?? []).forEach((c, i) => {
      const path = `spec.${field}[${i}]`;
      if (seen.has(c.name)) problems.push(`${path}.name: Duplicate value: "${c.name}"`);
      seen.add(c.name);
      check(`${path}.resources.requests`, c.resources?.requests);
      check(`${path}.resources.limits`, c.resources?.limits);
    });
  }
  check('spec.overhead', pod.spec['overhead']);
  return problems;
}

export interface NodeResources {
  cpu: string;
  memory: string;
  pods: number;
}

/**
 * Node allocatable (upstream GetNodeAllocatableReservation): capacity minus
 * systemReserved, kubeReserved and, for memory, the hard eviction threshold
 * (`memory.available`, a quantity or a percentage of capacity); never below
 * zero. Returns cpu in millicores ("3500m") and memory in bytes.
 */
export function allocatable(
  capacity: NodeResources,
  systemReserved: Partial<Pick<NodeResources, 'cpu' | 'memory'>> = {},
  kubeReserved: Partial<Pick<NodeResources, 'cpu' | 'memory'>> = {},
  evictionHardMemory?: string,
): NodeResources {
  const cap = cpuMemory(capacity);
  let eviction = 0n;
  if (evictionHardMemory) {
    const pct = /^(\d+(?:\.\d+)?)%$/.exec(evictionHardMemory);
    eviction = pct ? BigInt(Math.floor((Number(cap.memory) * Number(pct[1])) / 100)) : value(evictionHardMemory);
  }
  const reserved = add(add(cpuMemory(systemReserved), cpuMemory(kubeReserved)), { milliCpu: 0n, memory: eviction });
  const clamp = (v: bigint) => (v < 0n ? 0n : v);
  return {
    cpu: `${clamp(cap.milliCpu - reserved.milliCpu)}m`,
    memory: `${clamp(cap.memory - reserved.memory)}`,
    pods: capacity.pods,
  };
}
