/**
 * The QoS cgroup tiers (upstream qos_container_manager_linux.go and
 * node_container_manager_linux.go createNodeAllocatableCgroups):
 * `<cgroupRoot>/kubepods` holds Guaranteed pods directly and the
 * `burstable` and `besteffort` tiers. kubepods gets the node's capacity
 * (cpu shares, memory limit; allocatable enforcement is not built), the
 * besteffort tier 2 shares, the burstable tier the shares of the active
 * Burstable pods' summed cpu requests, recomputed by update().
 */
import type { Pod } from '../../api/pod.js';
import { milliValue, value } from '../../api/quantity.js';
import { milliCPUToShares, MIN_SHARES } from '../../workers/sync/container-config.js';
import type { QOSClass } from '../../workers/sync/qos.js';
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
  /** Node capacity: cpu and memory quantities. */
  capacity: { cpu: string; memory: string };
  /** Pods that count for the burstable tier's shares (upstream activePods). */
  activePods(): readonly Pod[];
}

export class QosCgroups {
  readonly kubepods: CgroupName;
  readonly burstable: CgroupName;
  readonly besteffort: CgroupName;
  private lastBurstableShares: number | undefined;

  constructor(private readonly o: QosCgroupsOptions) {
    this.kubepods = childCgroupName(o.root, KUBEPODS);
    this.burstable = childCgroupName(this.kubepods, BURSTABLE_TIER);
    this.besteffort = childCgroupName(this.kubepods, BESTEFFORT_TIER);
  }

  /** The cgroup pods of a class go under (Guaranteed: kubepods itself). */
  tierOf(qos: QOSClass): CgroupName {
    return qos === 'Burstable' ? this.burstable : qos === 'BestEffort' ? this.besteffort : this.kubepods;
  }

  /** Creates kubepods and the two tiers (existing ones are updated). */
  async start(): Promise<void> {
    const { manager, capacity } = this.o;
    await manager.create(this.kubepods, {
      cpuShares: milliCPUToShares(Number(milliValue(capacity.cpu))),
      memoryLimitBytes: Number(value(capacity.memory)),
    });
    await manager.create(this.besteffort, { cpuShares: MIN_SHARES });
    await manager.create(this.burstable, { cpuShares: MIN_SHARES });
    await this.update();
  }

  /** Upstream UpdateCgroups: besteffort back to 2 shares, burstable from the active pods. */
  async update(): Promise<void> {
    const shares = burstableTierShares(this.o.activePods());
    await this.o.manager.update(this.besteffort, { cpuShares: MIN_SHARES });
    await this.o.manager.update(this.burstable, { cpuShares: shares });
    this.lastBurstableShares = shares;
  }

  /** The burstable shares last written (for logs and tests). */
  burstableShares(): number | undefined {
    return this.lastBurstableShares;
  }
}
