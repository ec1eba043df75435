/**
 * The QoS cgroup tiers (upstream qos_container_manager_linux.go and
 * node_container_manager_linux.go createNodeAllocatableCgroups):
 * `<cgroupRoot>/kubepods` holds Guaranteed pods directly and the
 * `burstable` and `besteffort` tiers. kubepods gets cpu shares, a memory
 * limit and, where the node's pid capacity is known, a pids limit from
 * kubepodsLimits (node allocatable enforcement), the besteffort
 * tier 2 shares, the burstable tier the shares of the active Burstable pods'
 * summed cpu requests, recomputed by update().
 */
import type { Pod } from '../../api/pod.js';
import { milliValue, value } from '../../api/quantity.js';
import { milliCPUToShares, MIN_SHARES } from '../../pod/cpu-shares.js';
import type { QOSClass } from '../../pod/qos.js';
import { childCgroupName, type CgroupName } from './cgroup-name.js';
import type { CgroupManager } from './cgroup-manager.js';
import { burstableTierShares } from './resource-config.js';

export const KUBEPODS = 'kubepods';
export const BURSTABLE_TIER = 'burstable';
export const BESTEFFORT_TIER = 'besteffort';

export interface QosCgroupsOptions {
  manager: CgroupManager;
  /** cgroupRoot as a name ([] = the root cgroup). */
  root: CgroupName;
  /** What kubepods may use: cpu, memory and pid quantities (kubepodsLimits). */
  kubepods: KubepodsLimits;
  /** Pods that count for the burstable tier's shares (upstream activePods). */
  activePods(): readonly Pod[];
}

/** cpu and memory quantities; pid (the node's pid_max, as upstream's internal capacity) when known. */
export interface KubepodsLimits {
  cpu: string;
  memory: string;
  pid?: string;
}

/**
 * Upstream enforceNodeAllocatableCgroups' limits for kubepods: the node's
 * internal capacity (cpu, memory and pid), or, when enforceNodeAllocatable
 * has "pods", that minus systemReserved and kubeReserved (not the eviction
 * threshold; at least 0).
 */
export function kubepodsLimits(
  capacity: KubepodsLimits,
  o: { enforcePods: boolean; systemReserved: Record<string, string>; kubeReserved: Record<string, string> },
): KubepodsLimits {
  if (!o.enforcePods) return capacity;
  const left = (resource: keyof KubepodsLimits, amount: (q: string) => bigint): bigint => {
    let v = amount(capacity[resource] ?? '0');
    for (const list of [o.systemReserved, o.kubeReserved]) if (list[resource] !== undefined) v -= amount(list[resource]);
    return v < 0n ? 0n : v;
  };
  return {
    cpu: `${left('cpu', (q) => milliValue(q))}m`,
    memory: String(left('memory', (q) => value(q))),
    ...(capacity.pid !== undefined && { pid: String(left('pid', (q) => value(q))) }),
  };
}

export class QosCgroups {
  readonly kubepods: CgroupName;
  readonly burstable: CgroupName;
  readonly besteffort: CgroupName;
  private lastBurstableShares: number | undefined;

  constructor(private readonly options: Readonly<QosCgroupsOptions>) {
    this.kubepods = childCgroupName(options.root, KUBEPODS);
    this.burstable = childCgroupName(this.kubepods, BURSTABLE_TIER);
    this.besteffort = childCgroupName(this.kubepods, BESTEFFORT_TIER);
  }

  /** The cgroup pods of a class go under (Guaranteed: kubepods itself). */
  tierOf(qos: QOSClass): CgroupName {
    return qos === 'Burstable' ? this.burstable : qos === 'BestEffort' ? this.besteffort : this.kubepods;
  }

  /** Creates kubepods and the two tiers (existing ones are updated). */
  async start(): Promise<void> {
    const { manager, kubepods } = this.options;
    await manager.create(this.kubepods, {
      cpuShares: milliCPUToShares(Number(milliValue(kubepods.cpu))),
      memoryLimitBytes: Number(value(kubepods.memory)),
      ...(kubepods.pid !== undefined && { pidsLimit: Number(value(kubepods.pid)) }),
    });
    await manager.create(this.besteffort, { cpuShares: MIN_SHARES });
    await manager.create(this.burstable, { cpuShares: MIN_SHARES });
    await this.update();
  }

  /** Upstream UpdateCgroups: besteffort back to 2 shares, burstable from the active pods. */
  async update(): Promise<void> {
    const shares = burstableTierShares(this.options.activePods());
    await this.options.manager.update(this.besteffort, { cpuShares: MIN_SHARES });
    await this.options.manager.update(this.burstable, { cpuShares: shares });
    this.lastBurstableShares = shares;
  }

  /** The burstable shares last written (for logs and tests). */
  burstableShares(): number | undefined {
    return this.lastBurstableShares;
  }
}
