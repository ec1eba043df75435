/**
 * What the eviction manager measures (the part of upstream's stats summary it
 * reads) and the seam it reads it through: `EvictionStatsProvider`, with
 * `criEvictionStats` (eviction/cri-eviction-stats.ts) for the real node and
 * `FakeEvictionStats` in test/fakes. Figures are bigints of bytes or counts;
 * absent means not measured (a signal without a figure is never met, a pod
 * without stats ranks first, as upstream's statsFunc "not found").
 */
import type { Pod } from '../../api/pod.js';
import type { Observations } from './thresholds.js';

export interface FsUsage {
  usedBytes?: bigint;
  inodesUsed?: bigint;
}

export interface ContainerUsage {
  name: string;
  memoryWorkingSetBytes?: bigint;
  /** The container's writable layer. */
  rootfs?: FsUsage;
  /** The container's log files. */
  logs?: FsUsage;
}

export interface VolumeUsage extends FsUsage {
  /** The pod's volume name. */
  name: string;
}

export interface PodUsage {
  uid: string;
  memoryWorkingSetBytes?: bigint;
  containers: ContainerUsage[];
  /** Local volumes (emptyDir on disk, configMap, secret, downwardAPI, projected). */
  volumes: VolumeUsage[];
  /** The pod's /etc/hosts file, when the kubelet wrote one. */
  etcHostsBytes?: bigint;
  processes?: number;
}

export interface NodeSummary {
  /** The signals upstream's makeSignalObservations derives from the node stats (all but allocatableMemory.available). */
  observations: Observations;
  /** The image filesystem is not the node filesystem (upstream HasDedicatedImageFs). */
  dedicatedImageFs: boolean;
}

export interface PodsSummary {
  pods: PodUsage[];
  /** The signals derived from the pods' figures: allocatableMemory.available. */
  observations: Observations;
}

/**
 * Two reads, so that the per-pod one (a runtime-wide stats listing, costly
 * at hundreds of pods) is made only when a decision reads it.
 */
export interface EvictionStatsProvider {
  /** Measures the node now. Rejects when the node figures cannot be read. */
  node(): Promise<NodeSummary>;
  /** Measures these pods now. */
  pods(pods: readonly Pod[]): Promise<PodsSummary>;
}
