/**
 * A pod's cgroup resource configuration (upstream v1.20 pkg/kubelet/cm
 * helpers_linux.go ResourceConfigForPod with pkg/api/v1/resource
 * PodRequestsAndLimits). Pure.
 *
 * Requests and limits are summed over the regular containers; each init
 * container raises a resource to its own amount when larger (v1.20 knows no
 * sidecars: a restartable init container counts as any init container);
 * spec.overhead is added to the requests and to the limits that are set.
 * Then, by QoS class:
 *  - Guaranteed: shares from the cpu request, quota from the cpu limit,
 *    memory limit = the summed memory limit;
 *  - Burstable: shares; quota only when every regular container has a cpu
 *    limit; memory limit only when every regular container has one;
 *  - BestEffort: shares 2 (MinShares) only.
 * With cpuCFSQuota false the quota is -1 (unlimited).
 */
import type { Pod, ResourceList } from '../../api/pod.js';
import { milliValue, value } from '../../api/quantity.js';
import { milliCPUToQuota, milliCPUToShares, MIN_SHARES } from '../../pod/cpu-shares.js';
import { getPodQOS } from '../../pod/qos.js';
import type { ResourceConfig } from './cgroup-manager.js';

/** Amounts by resource: cpu in millicores, the rest in whole units. */
type Amounts = Map<string, bigint>;

function amountOf(name: string, raw: string): bigint {
  return name === 'cpu' ? milliValue(raw) : value(raw);
}

function add(into: Amounts, list: ResourceList | undefined): void {
  for (const [name, raw] of Object.entries(list ?? {})) into.set(name, (into.get(name) ?? 0n) + amountOf(name, raw));
}

function max(into: Amounts, list: ResourceList | undefined): void {
  for (const [name, raw] of Object.entries(list ?? {})) {
    const v = amountOf(name, raw);
    const cur = into.get(name);
    if (cur === undefined || v > cur) into.set(name, v);
  }
}

/** Upstream v1.20 PodRequestsAndLimits (PodOverhead on, its v1.20 default). */
export function podRequestsAndLimits(pod: Pod): { requests: Amounts; limits: Amounts } {
  const requests: Amounts = new Map();
  const limits: Amounts = new Map();
  for (const c of pod.spec.containers ?? []) {
    add(requests, c.resources?.requests);
    add(limits, c.resources?.limits);
  }
  for (const c of pod.spec.initContainers ?? []) {
    max(requests, c.resources?.requests);
    max(limits, c.resources?.limits);
  }
  const overhead = pod.spec['overhead'];
  add(requests, overhead);
  for (const [name, raw] of Object.entries(overhead ?? {})) {
    const cur = limits.get(name);
    if (cur !== undefined && cur !== 0n) limits.set(name, cur + amountOf(name, raw));
  }
  return { requests, limits };
}

function isZero(list: ResourceList | undefined, name: string): boolean {
  const raw = list?.[name];
  return raw === undefined || milliValue(raw) === 0n;
}

export interface PodResourceOptions {
  /** cpuCFSQuota: CPU limits become CFS quotas. */
  enforceCPULimits: boolean;
  /** CFS period in microseconds (cpuCFSQuotaPeriod). */
  cpuPeriodUs: number;
}

/** Upstream ResourceConfigForPod (hugepage limits are not set by kubelet-ts). */
export function resourceConfigForPod(pod: Pod, options: PodResourceOptions): ResourceConfig {
  const { requests, limits } = podRequestsAndLimits(pod);
  const cpuShares = milliCPUToShares(Number(requests.get('cpu') ?? 0n));
  const cpuQuota = options.enforceCPULimits ? milliCPUToQuota(Number(limits.get('cpu') ?? 0n), options.cpuPeriodUs) : -1;
  const memoryLimitBytes = Number(limits.get('memory') ?? 0n);
  const containers = pod.spec.containers ?? [];
  const cpuLimitsDeclared = containers.every((c) => !isZero(c.resources?.limits, 'cpu'));
  const memoryLimitsDeclared = containers.every((c) => !isZero(c.resources?.limits, 'memory'));
  switch (getPodQOS(pod)) {
    case 'Guaranteed':
      return { cpuShares, cpuQuota, cpuPeriod: options.cpuPeriodUs, memoryLimitBytes };
    case 'Burstable':
      return {
        cpuShares,
        ...(cpuLimitsDeclared && { cpuQuota, cpuPeriod: options.cpuPeriodUs }),
        ...(memoryLimitsDeclared && { memoryLimitBytes }),
      };
    case 'BestEffort':
      return { cpuShares: MIN_SHARES };
  }
}

/**
 * Upstream qosContainerManager setCPUCgroupConfig: the burstable tier's
 * shares are those of the summed cpu requests of the active Burstable pods.
 */
export function burstableTierShares(activePods: readonly Pod[]): number {
  let milli = 0n;
  for (const pod of activePods) {
    if (getPodQOS(pod) !== 'Burstable') continue;
    milli += podRequestsAndLimits(pod).requests.get('cpu') ?? 0n;
  }
  return milliCPUToShares(Number(milli));
}
