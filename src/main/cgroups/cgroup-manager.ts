/**
 * The seam between the kubelet's cgroup logic (QoS tiers, pod cgroups) and
 * the cgroup filesystem (upstream pkg/kubelet/cm CgroupManager). One
 * implementation writes cgroupfs (fs-cgroup-manager.ts); the fake is
 * test/fakes/fake-cgroup-manager.ts.
 */
import type { CgroupName } from './cgroup-name.js';

/**
 * Upstream ResourceConfig (the fields kubelet-ts sets). An absent field is
 * left as it is. cpuQuota -1 means unlimited; pidsLimit -1 means "max".
 */
export interface ResourceConfig {
  cpuShares?: number;
  cpuQuota?: number;
  /** CFS period in microseconds. */
  cpuPeriod?: number;
  memoryLimitBytes?: number;
  pidsLimit?: number;
}

export interface CgroupManager {
  /** cgroup v1 (a hierarchy per controller) or v2 (unified). */
  readonly version: 1 | 2;
  /** The cgroup's literal form for the runtime (LinuxPodSandboxConfig.cgroup_parent). */
  name(name: CgroupName): string;
  /** The cgroup exists in every required controller (upstream Exists). */
  exists(name: CgroupName): Promise<boolean>;
  /** Creates the cgroup (and missing parents), then applies `resources`. Creating an existing one only updates it. */
  create(name: CgroupName, resources: ResourceConfig): Promise<void>;
  /** Writes `resources` to an existing cgroup. */
  update(name: CgroupName, resources: ResourceConfig): Promise<void>;
  /**
   * Removes the cgroup and its descendants (bottom-up rmdir; v1: in every
   * hierarchy where it exists). A cgroup with processes left fails (EBUSY):
   * callers kill them first (see pod-cgroups.ts).
   */
  destroy(name: CgroupName): Promise<void>;
  /** Pids of every process in the cgroup and its descendants (upstream Pids). */
  pids(name: CgroupName): Promise<number[]>;
  /** Names of the cgroup's child cgroups ([] when it does not exist). */
  children(name: CgroupName): Promise<string[]>;
}
