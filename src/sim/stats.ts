/**
 * Synthetic, plausible stats. Each container gets a steady CPU rate
 * (1–50 millicores) and a working set (4–63 MiB) derived from its id, so
 * repeated calls are consistent and cumulative counters grow with time.
 * Only running containers report cpu and memory (like containerd, whose
 * metrics come from the live task); every container reports its writable layer.
 */
import {
  ContainerState,
  PodSandboxState,
  type ContainerStats,
  type CpuUsage,
  type MemoryUsage,
  type PodSandboxStats,
} from '../gen/runtime/v1/api.js';
import type { ContainerRecord, SandboxRecord } from './store.js';

import { SNAPSHOTTER_MOUNT } from './images.js';
const MiB = 1024 * 1024;

function hash(id: string): number {
  return parseInt(id.slice(0, 8), 16) || 0;
}

const u64 = (v: number | bigint) => ({ value: typeof v === 'bigint' ? v : BigInt(Math.max(0, Math.round(v))) });

function cpu(nowNs: bigint, milliCores: number, runningNs: bigint): CpuUsage {
  return {
    timestamp: nowNs,
    usageCoreNanoSeconds: u64((runningNs * BigInt(Math.round(milliCores * 1000))) / 1_000_000n),
    usageNanoCores: u64(milliCores * 1_000_000),
    psi: undefined,
  };
}

function memory(nowNs: bigint, workingSet: number, limit: bigint): MemoryUsage {
  return {
    timestamp: nowNs,
    workingSetBytes: u64(workingSet),
    availableBytes: limit > 0n ? u64(limit - BigInt(workingSet) > 0n ? limit - BigInt(workingSet) : 0n) : undefined,
    usageBytes: u64(workingSet + 2 * MiB),
    rssBytes: u64(Math.floor(workingSet * 0.75)),
    pageFaults: u64(1000 + (workingSet >> 12)),
    majorPageFaults: u64(0),
    psi: undefined,
  };
}

function containerCpuMilli(c: ContainerRecord): number {
  return 1 + (hash(c.id) % 50);
}

function containerWorkingSet(c: ContainerRecord): number {
  return c.usage?.workingSetBytes ?? (4 + (hash(c.id) % 60)) * MiB;
}

export function containerStats(c: ContainerRecord, nowNs: bigint): ContainerStats {
  const h = hash(c.id);
  const running = c.state === ContainerState.CONTAINER_RUNNING;
  const runningNs = c.startedAt > 0n ? (running ? nowNs : c.finishedAt) - c.startedAt : 0n;
  return {
    attributes: {
      id: c.id,
      metadata: c.config.metadata,
      labels: c.config.labels,
      annotations: c.config.annotations,
    },
    cpu: running ? cpu(nowNs, containerCpuMilli(c), runningNs > 0n ? runningNs : 0n) : undefined,
    memory: running ? memory(nowNs, containerWorkingSet(c), c.config.linux?.resources?.memoryLimitInBytes ?? 0n) : undefined,
    writableLayer: {
      timestamp: nowNs,
      fsId: { mountpoint: SNAPSHOTTER_MOUNT },
      usedBytes: u64(c.usage?.writableLayerBytes ?? 8192 + (h % MiB)),
      inodesUsed: u64(10 + (h % 100)),
    },
    swap: running ? { timestamp: nowNs, swapAvailableBytes: u64(0), swapUsageBytes: u64(0) } : undefined,
    io: undefined,
  };
}

/** Stats of a READY sandbox: the pause process plus its running containers. */
export function sandboxStats(s: SandboxRecord, containers: readonly ContainerRecord[], nowNs: bigint): PodSandboxStats {
  const running = containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING);
  const perContainer = running.map((c) => containerStats(c, nowNs));
  const ageNs = nowNs > s.createdAt ? nowNs - s.createdAt : 0n;
  let milli = 0.1;
  let ws = 300 * 1024;
  for (const c of running) {
    milli += containerCpuMilli(c);
    ws += containerWorkingSet(c);
  }
  const h = hash(s.id);
  const ageSec = ageNs / 1_000_000_000n;
  const rxRate = BigInt(512 + (h % 4096));
  return {
    attributes: { id: s.id, metadata: s.config.metadata, labels: s.config.labels, annotations: s.config.annotations },
    linux: {
      cpu: cpu(nowNs, milli, ageNs),
      memory: memory(nowNs, ws, s.config.linux?.resources?.memoryLimitInBytes ?? 0n),
      network:
        s.state === PodSandboxState.SANDBOX_READY && !s.hostNetwork
          ? {
              timestamp: nowNs,
              defaultInterface: {
                name: 'eth0',
                rxBytes: u64(s.network?.rxBytes ?? ageSec * rxRate),
                rxErrors: u64(s.network?.rxErrors ?? 0),
                txBytes: u64(s.network?.txBytes ?? (ageSec * rxRate) / 2n),
                txErrors: u64(s.network?.txErrors ?? 0),
              },
              interfaces: [],
            }
          : undefined,
      process: { timestamp: nowNs, processCount: u64(running.length + 1) },
      containers: perContainer,
      io: undefined,
    },
    windows: undefined,
  };
}
