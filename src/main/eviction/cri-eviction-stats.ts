/**
 * The eviction manager's figures on a real node (upstream summary provider
 * as makeSignalObservations reads it):
 * - memory.available: machine memory − the root cgroup's working set;
 * - nodefs.*: statfs of the root directory; imagefs.* (and containerfs.*):
 *   statfs of the runtime's ImageFsInfo mountpoint (the root directory when
 *   the runtime does not say); the image fs is dedicated when the two are on
 *   different devices;
 * - pid.available: pid_max − the kernel's task count;
 * - per pod (`pods`): the `criStats` task (working sets, writable layers,
 *   process counts) and the `diskUsage` task over its log directories and
 *   local volume directories, both in the worker pool: no disk walk on the
 *   main thread; allocatableMemory.available: node allocatable memory − the
 *   pods' working sets.
 */
import { statSync } from 'node:fs';
import type { Pod } from '../../api/pod.js';
import { value } from '../../api/quantity.js';
import type { Clock } from '../../common/clock.js';
import type { CriApi } from '../../cri/client.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import type { HostProbe } from '../host/host-probe.js';
import { measurePodDiskUsage } from '../stats/pod-disk-usage.js';
import type { EvictionStatsProvider, NodeSummary, PodsSummary, PodUsage, VolumeUsage } from './eviction-stats.js';
import type { Observations } from './thresholds.js';

export interface CriEvictionStatsOptions {
  runner: Pick<TaskRunner, 'run'>;
  cri: Pick<CriApi, 'imageFsInfo'>;
  host: HostProbe;
  rootDir: string;
  podLogsDir: string;
  /** Node allocatable memory ("3Gi"), for allocatableMemory.available. */
  allocatableMemory: () => string | undefined;
  clock: Clock;
}

export class CriEvictionStats implements EvictionStatsProvider {
  constructor(private readonly options: Readonly<CriEvictionStatsOptions>) {}

  private async imageFsPath(): Promise<string> {
    try {
      const info = await this.options.cri.imageFsInfo({}, { timeoutMs: 10_000 });
      return info.imageFilesystems[0]?.fsId?.mountpoint || this.options.rootDir;
    } catch {
      return this.options.rootDir;
    }
  }

  private nodeObservations(imageFsPath: string): Observations {
    const { host, clock } = this.options;
    const time = clock.now();
    const obs: Observations = {};
    const mem = host.machine().memoryBytes;
    const ws = host.memoryWorkingSetBytes();
    obs['memory.available'] = { available: mem > ws ? mem - ws : 0n, capacity: mem, time };
    const fs = (prefix: 'nodefs' | 'imagefs', path: string) => {
      try {
        const s = host.fsStats(path);
        obs[`${prefix}.available`] = { available: s.availableBytes, capacity: s.capacityBytes, time };
        obs[`${prefix}.inodesFree`] = { available: s.inodesFree, capacity: s.inodes, time };
      } catch {
        // An unreadable file system gives no observation: its thresholds are not met.
      }
    };
    fs('nodefs', this.options.rootDir);
    fs('imagefs', imageFsPath);
    if (obs['imagefs.available']) obs['containerfs.available'] = obs['imagefs.available'];
    if (obs['imagefs.inodesFree']) obs['containerfs.inodesFree'] = obs['imagefs.inodesFree'];
    const pids = host.pids();
    obs['pid.available'] = { available: BigInt(pids.max - pids.running), capacity: BigInt(pids.max), time };
    return obs;
  }

  private dedicated(imageFsPath: string): boolean {
    try {
      return statSync(imageFsPath).dev !== statSync(this.options.rootDir).dev;
    } catch {
      return false;
    }
  }

  async node(): Promise<NodeSummary> {
    const imageFsPath = await this.imageFsPath();
    return { observations: this.nodeObservations(imageFsPath), dedicatedImageFs: this.dedicated(imageFsPath) };
  }

  async pods(pods: readonly Pod[]): Promise<PodsSummary> {
    const wanted = new Map(pods.map((p) => [p.metadata.uid ?? '', p]));
    const [snap, disk] = await Promise.all([
      this.options.runner.run({ type: 'criStats' }),
      measurePodDiskUsage(this.options.runner, { rootDir: this.options.rootDir, podLogsDir: this.options.podLogsDir }, wanted.values()),
    ]);
    const out: PodUsage[] = [];
    let podsWorkingSet = 0n;
    for (const s of snap.pods) {
      podsWorkingSet += s.memory?.workingSetBytes ?? 0n;
      if (!wanted.has(s.uid)) continue;
      const d = disk.get(s.uid);
      const volumes: VolumeUsage[] = [...(d?.volumes ?? [])].map(([name, u]) => ({
        name,
        usedBytes: u.usedBytes,
        inodesUsed: u.inodesUsed,
      }));
      out.push({
        uid: s.uid,
        memoryWorkingSetBytes: s.memory?.workingSetBytes,
        processes: s.processCount !== undefined ? Number(s.processCount) : undefined,
        containers: s.containers.map((c) => {
          const l = d?.logs.get(c.name);
          return {
            name: c.name,
            memoryWorkingSetBytes: c.memory?.workingSetBytes,
            rootfs: c.rootfs && { usedBytes: c.rootfs.usedBytes, inodesUsed: c.rootfs.inodesUsed },
            logs: { usedBytes: l?.usedBytes ?? 0n, inodesUsed: l?.inodesUsed ?? 0n },
          };
        }),
        volumes,
      });
    }
    const observations: Observations = {};
    const alloc = this.options.allocatableMemory();
    if (alloc !== undefined) {
      const cap = value(alloc);
      const available = cap > podsWorkingSet ? cap - podsWorkingSet : 0n;
      observations['allocatableMemory.available'] = { available, capacity: cap, time: this.options.clock.now() };
    }
    return { pods: out, observations };
  }
}
