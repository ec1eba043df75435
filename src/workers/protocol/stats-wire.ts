/**
 * What the stats tasks return across the thread boundary: the CRI's resource
 * usage as plain numbers (the criStats task, stats/cri-stats.ts) and the
 * bytes and inodes under a path (the diskUsage task, stats/disk-usage.ts).
 */

export interface CpuSample {
  /** ns since the epoch */
  time: bigint;
  usageCoreNanoSeconds: bigint;
  /** When the runtime reports it. */
  usageNanoCores?: bigint;
}

export interface MemorySample {
  time: bigint;
  workingSetBytes?: bigint;
  usageBytes?: bigint;
  rssBytes?: bigint;
  availableBytes?: bigint;
  pageFaults?: bigint;
  majorPageFaults?: bigint;
}

export interface FsSample {
  time: bigint;
  usedBytes?: bigint;
  inodesUsed?: bigint;
  mountpoint?: string;
}

export interface ContainerStatsSample {
  id: string;
  name: string;
  /** ns */
  createdAt: bigint;
  cpu?: CpuSample;
  memory?: MemorySample;
  rootfs?: FsSample;
}

export interface PodStatsSample {
  uid: string;
  name: string;
  namespace: string;
  sandboxId: string;
  createdAt: bigint;
  cpu?: CpuSample;
  memory?: MemorySample;
  network?: {
    time: bigint;
    interfaces: { name: string; rxBytes?: bigint; rxErrors?: bigint; txBytes?: bigint; txErrors?: bigint }[];
    defaultName?: string;
  };
  processCount?: bigint;
  containers: ContainerStatsSample[];
}

export interface CriStatsSnapshot {
  pods: PodStatsSample[];
  imageFs?: FsSample;
}

export interface DiskUsage {
  path: string;
  usedBytes: bigint;
  inodesUsed: bigint;
}
