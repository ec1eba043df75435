/**
 * /stats/summary and /metrics/resource (upstream server/stats summary and
 * collectors/resource_metrics over the CRI stats provider).
 *
 * Pod and container figures come from the CRI (the `criStats` pool task, so
 * the decode stays off the main thread); node figures from the host (cgroup
 * root cpuacct or /proc/stat, the cgroup memory working set, the root
 * directory's filesystem, the host's network interfaces as cadvisor's root
 * container: /proc/1/net/dev). usageNanoCores is computed from the previous
 * sample of the same container, pod or node when the runtime does not report
 * it (upstream getAndUpdateContainerUsageNanoCores), so the first call after
 * a start has none. uint64 values are written exactly (JSON numbers beyond
 * 2^53 included).
 */
import { readFileSync, statSync } from 'node:fs';
import type { Clock } from '../../common/clock.js';
import { DEFAULT_INTERFACE } from '../../common/net-dev.js';
import { rfc3339 } from '../../common/time.js';
import type { HostProbe } from '../host/host-probe.js';
import type { CpuSample, CriStatsSnapshot, FsSample, MemorySample } from '../../workers/protocol/stats-wire.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import type { Pod } from '../../api/pod.js';
import { etcHostsPath, podDir } from '../../pod/pod-dirs.js';
import { localVolumeNames } from '../eviction/ranking.js';
import { measurePodDiskUsage, type PodDiskUsage } from '../stats/pod-disk-usage.js';

export interface StatsProviderOptions {
  runner: Pick<TaskRunner, 'run'>;
  host: HostProbe;
  nodeName: string;
  rootDir: string;
  clock: Clock;
  /** When the kubelet started (the node's startTime in the summary). */
  startedAt: number;
  /** Where pod logs are (container log usage); with `podOf`, volumes, logs and ephemeral storage are reported. */
  podLogsDir?: string;
  /** The pod's spec by UID (its volumes and containers), when the kubelet knows the pod. */
  podOf?: (uid: string) => Pod | undefined;
  /** Node CPU in core-ns (default: cgroup cpuacct.usage or /proc/stat). */
  nodeCpuNs?: () => bigint | undefined;
}

type Json = Record<string, unknown>;
type Interface = NonNullable<CriStatsSnapshot['pods'][number]['network']>['interfaces'][number];

const nsTime = (ns: bigint) => rfc3339(Number(ns / 1_000_000n));
const defined = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * statsapi.NetworkStats: every interface, and at the top level the default one (upstream
 * cadvisorInfoToNetworkStats: eth0; a runtime's own stats name theirs), with an empty name when absent.
 */
function networkJson(timeNs: bigint, interfaces: readonly Interface[], defaultName = DEFAULT_INTERFACE): Json {
  const iface = (i: Interface) =>
    defined({ name: i.name, rxBytes: i.rxBytes, rxErrors: i.rxErrors, txBytes: i.txBytes, txErrors: i.txErrors });
  const def = interfaces.find((i) => i.name === defaultName);
  return defined({
    time: nsTime(timeNs),
    ...(def ? iface(def) : { name: '' }),
    interfaces: interfaces.length > 0 ? interfaces.map(iface) : undefined,
  });
}

/** Exact JSON for objects holding bigints. */
export function stringifyWithBigints(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `__u64__${v}` : v)).replace(/"__u64__(\d+)"/g, '$1');
}

function readTrimmed(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** cadvisor's root cgroup CPU (cgroup v1 cpuacct.usage, v2 cpu.stat usage_usec), else /proc/stat busy time. */
function defaultNodeCpuNs(): bigint | undefined {
  const v1 = readTrimmed('/sys/fs/cgroup/cpuacct/cpuacct.usage') || readTrimmed('/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage');
  if (/^\d+$/.test(v1)) return BigInt(v1);
  const v2 = /^usage_usec (\d+)$/m.exec(readTrimmed('/sys/fs/cgroup/cpu.stat'));
  if (v2) return BigInt(v2[1]) * 1000n;
  const line = readTrimmed('/proc/stat').split('\n')[0] ?? '';
  const f = line
    .split(/\s+/)
    .slice(1)
    .map((x) => BigInt(x || '0'));
  if (f.length < 8) return undefined;
  const busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
  return busy * 10_000_000n; // USER_HZ 100
}

export class StatsProvider {
  /** Previous CPU samples by container id / "pod:<uid>" / "node". */
  private prev = new Map<string, { time: bigint; core: bigint }>();

  constructor(private readonly options: Readonly<StatsProviderOptions>) {}

  private nanoCores(key: string, cpu: CpuSample, next: Map<string, { time: bigint; core: bigint }>): bigint | undefined {
    next.set(key, { time: cpu.time, core: cpu.usageCoreNanoSeconds });
    if (cpu.usageNanoCores !== undefined) return cpu.usageNanoCores;
    const p = this.prev.get(key);
    if (!p || cpu.time <= p.time || cpu.usageCoreNanoSeconds < p.core) return undefined;
    return ((cpu.usageCoreNanoSeconds - p.core) * 1_000_000_000n) / (cpu.time - p.time);
  }

  private cpuJson(key: string, cpu: CpuSample | undefined, next: Map<string, { time: bigint; core: bigint }>): Json | undefined {
    if (!cpu) return undefined;
    return defined({
      time: nsTime(cpu.time),
      usageNanoCores: this.nanoCores(key, cpu, next),
      usageCoreNanoSeconds: cpu.usageCoreNanoSeconds,
    });
  }

  private memoryJson(m: MemorySample | undefined): Json | undefined {
    if (!m) return undefined;
    return defined({
      time: nsTime(m.time),
      availableBytes: m.availableBytes,
      usageBytes: m.usageBytes,
      workingSetBytes: m.workingSetBytes,
      rssBytes: m.rssBytes,
      pageFaults: m.pageFaults,
      majorPageFaults: m.majorPageFaults,
    });
  }

  private fsJson(f: FsSample | undefined): Json | undefined {
    if (!f) return undefined;
    return defined({ time: nsTime(f.time), usedBytes: f.usedBytes, inodesUsed: f.inodesUsed });
  }

  private nodeStats(next: Map<string, { time: bigint; core: bigint }>, onlyCpuAndMemory: boolean): Json {
    const { host, clock } = this.options;
    const nowNs = BigInt(clock.now()) * 1_000_000n;
    const core = (this.options.nodeCpuNs ?? defaultNodeCpuNs)();
    const machine = host.machine();
    const ws = host.memoryWorkingSetBytes();
    const node: Json = {
      nodeName: this.options.nodeName,
      startTime: rfc3339(this.options.startedAt),
      cpu: core === undefined ? undefined : this.cpuJson('node', { time: nowNs, usageCoreNanoSeconds: core }, next),
      memory: defined({
        time: nsTime(nowNs),
        availableBytes: machine.memoryBytes > ws ? machine.memoryBytes - ws : 0n,
        workingSetBytes: ws,
      }),
    };
    if (!onlyCpuAndMemory) {
      try {
        const fs = host.fsStats(this.options.rootDir);
        node.fs = {
          time: nsTime(nowNs),
          availableBytes: fs.availableBytes,
          capacityBytes: fs.capacityBytes,
          usedBytes: fs.capacityBytes - fs.availableBytes,
          inodesFree: fs.inodesFree,
          inodes: fs.inodes,
          inodesUsed: fs.inodes - fs.inodesFree,
        };
      } catch {
        // the root directory's filesystem cannot be read: no fs figures
      }
      const pids = host.pids();
      node.rlimit = { time: nsTime(nowNs), maxpid: pids.max, curproc: pids.running };
      const interfaces = host.network();
      if (interfaces) node.network = networkJson(nowNs, interfaces);
    }
    return defined(node);
  }

  /** statfs of `path` as upstream's FsStats capacity fields, with this usage; undefined when unreadable. */
  private fsWithUsage(path: string, nowNs: bigint, usedBytes: bigint, inodesUsed: bigint): Json | undefined {
    try {
      const f = this.options.host.fsStats(path);
      return {
        time: nsTime(nowNs),
        availableBytes: f.availableBytes,
        capacityBytes: f.capacityBytes,
        usedBytes,
        inodesFree: f.inodesFree,
        inodes: f.inodes,
        inodesUsed,
      };
    } catch {
      return undefined;
    }
  }

  /** Volumes, container logs and ephemeral storage of the pods the kubelet knows (disk walks in the pool). */
  private async diskUsage(snap: CriStatsSnapshot): Promise<Map<string, { pod: Pod; disk: PodDiskUsage }>> {
    const { podOf, podLogsDir } = this.options;
    if (!podOf || podLogsDir === undefined) return new Map();
    const pods = snap.pods.flatMap((p) => podOf(p.uid) ?? []);
    const disk = await measurePodDiskUsage(this.options.runner, { rootDir: this.options.rootDir, podLogsDir }, pods);
    return new Map(
      pods.map((pod) => [
        pod.metadata.uid ?? '',
        { pod, disk: disk.get(pod.metadata.uid ?? '') ?? { volumes: new Map(), logs: new Map() } },
      ]),
    );
  }

  /** upstream: container rootfs + logs, the local ephemeral volumes and the managed /etc/hosts. */
  private ephemeralStorage(
    pod: Pod,
    disk: PodDiskUsage,
    containers: CriStatsSnapshot['pods'][number]['containers'],
    nowNs: bigint,
  ): Json | undefined {
    let bytes = 0n;
    let inodes = 0n;
    for (const c of containers) {
      bytes += (c.rootfs?.usedBytes ?? 0n) + (disk.logs.get(c.name)?.usedBytes ?? 0n);
      inodes += (c.rootfs?.inodesUsed ?? 0n) + (disk.logs.get(c.name)?.inodesUsed ?? 0n);
    }
    for (const name of localVolumeNames(pod, true)) {
      const v = disk.volumes.get(name);
      bytes += v?.usedBytes ?? 0n;
      inodes += v?.inodesUsed ?? 0n;
    }
    try {
      bytes += BigInt(statSync(etcHostsPath(podDir(this.options.rootDir, pod.metadata.uid ?? ''))).size);
      inodes += 1n;
    } catch {
      // no managed /etc/hosts (host network, or not written yet)
    }
    return this.fsWithUsage(this.options.rootDir, nowNs, bytes, inodes);
  }

  /** The statsapi.Summary object (bigints inside: serialize with stringifyWithBigints). */
  async summary(onlyCpuAndMemory = false): Promise<Json> {
    const snap: CriStatsSnapshot = await this.options.runner.run({ type: 'criStats', procNetwork: !onlyCpuAndMemory });
    const known = onlyCpuAndMemory ? new Map<string, { pod: Pod; disk: PodDiskUsage }>() : await this.diskUsage(snap);
    const nowNs = BigInt(this.options.clock.now()) * 1_000_000n;
    const next = new Map<string, { time: bigint; core: bigint }>();
    const node = this.nodeStats(next, onlyCpuAndMemory);
    if (!onlyCpuAndMemory && snap.imageFs) node.runtime = { imageFs: this.fsJson(snap.imageFs) };
    const pods = snap.pods.map((p) => {
      const k = known.get(p.uid);
      const logsOf = (name: string) => {
        const l = k?.disk.logs.get(name);
        return l && this.options.podLogsDir !== undefined
          ? this.fsWithUsage(this.options.podLogsDir, nowNs, l.usedBytes, l.inodesUsed)
          : undefined;
      };
      const containers = p.containers.map((c) =>
        defined({
          name: c.name,
          startTime: nsTime(c.createdAt),
          cpu: this.cpuJson(c.id, c.cpu, next),
          memory: this.memoryJson(c.memory),
          ...(!onlyCpuAndMemory && { rootfs: this.fsJson(c.rootfs) }),
          ...(logsOf(c.name) && { logs: logsOf(c.name) }),
        }),
      );
      const pod: Json = {
        podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
        startTime: nsTime(p.createdAt),
        containers,
        cpu: this.cpuJson(`pod:${p.uid}`, p.cpu, next),
        memory: this.memoryJson(p.memory),
      };
      if (!onlyCpuAndMemory) {
        if (p.network) pod.network = networkJson(p.network.time, p.network.interfaces, p.network.defaultName);
        if (p.processCount !== undefined) pod.process_stats = { process_count: p.processCount };
        if (k) {
          const volume = [...k.disk.volumes].flatMap(([name, u]) => {
            const f = this.fsWithUsage(u.path, nowNs, u.usedBytes, u.inodesUsed);
            return f ? [{ ...f, name }] : [];
          });
          if (volume.length) pod.volume = volume;
          pod['ephemeral-storage'] = this.ephemeralStorage(k.pod, k.disk, p.containers, nowNs);
        }
      }
      return defined(pod);
    });
    this.prev = next;
    return { node, pods };
  }

  /** The /metrics/resource exposition (upstream resource metrics, with sample timestamps in ms). */
  async resourceMetrics(): Promise<string> {
    let summary: Json;
    let scrapeError = 0;
    try {
      summary = await this.summary(true);
    } catch {
      summary = { node: {}, pods: [] };
      scrapeError = 1;
    }
    const out: string[] = [];
    const family = (name: string, type: string, help: string, samples: string[]) => {
      out.push(`# HELP ${name} [STABLE] ${help}`, `# TYPE ${name} ${type}`, ...samples);
    };
    const ms = (t: unknown) => Date.parse(String(t));
    const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    const secs = (ns: unknown) => (Number(ns) / 1e9).toString();
    /** A uint64 (bigint) or number as decimal text. */
    const int = (v: unknown) => (typeof v === 'bigint' || typeof v === 'number' ? v.toString() : 'NaN');
    const node = summary.node as Json;
    const cpu = node.cpu as Json | undefined;
    const mem = node.memory as Json | undefined;
    family(
      'node_cpu_usage_seconds_total',
      'counter',
      'Cumulative cpu time consumed by the node in core-seconds',
      cpu ? [`node_cpu_usage_seconds_total ${secs(cpu.usageCoreNanoSeconds)} ${ms(cpu.time)}`] : [],
    );
    family(
      'node_memory_working_set_bytes',
      'gauge',
      'Current working set of the node in bytes',
      mem?.workingSetBytes !== undefined ? [`node_memory_working_set_bytes ${int(mem.workingSetBytes)} ${ms(mem.time)}`] : [],
    );
    const podSamples: { cpu: string[]; mem: string[]; ccpu: string[]; cmem: string[]; cstart: string[] } = {
      cpu: [],
      mem: [],
      ccpu: [],
      cmem: [],
      cstart: [],
    };
    for (const p of summary.pods as Json[]) {
      const ref = p.podRef as { name: string; namespace: string };
      const podLabels = `namespace="${esc(ref.namespace)}",pod="${esc(ref.name)}"`;
      const pc = p.cpu as Json | undefined;
      const pm = p.memory as Json | undefined;
      if (pc) podSamples.cpu.push(`pod_cpu_usage_seconds_total{${podLabels}} ${secs(pc.usageCoreNanoSeconds)} ${ms(pc.time)}`);
      if (pm?.workingSetBytes !== undefined)
        podSamples.mem.push(`pod_memory_working_set_bytes{${podLabels}} ${int(pm.workingSetBytes)} ${ms(pm.time)}`);
      for (const c of p.containers as Json[]) {
        const labels = `container="${esc(String(c.name))}",${podLabels}`;
        const cc = c.cpu as Json | undefined;
        const cm = c.memory as Json | undefined;
        if (cc) podSamples.ccpu.push(`container_cpu_usage_seconds_total{${labels}} ${secs(cc.usageCoreNanoSeconds)} ${ms(cc.time)}`);
        if (cm?.workingSetBytes !== undefined)
          podSamples.cmem.push(`container_memory_working_set_bytes{${labels}} ${int(cm.workingSetBytes)} ${ms(cm.time)}`);
        podSamples.cstart.push(`container_start_time_seconds{${labels}} ${ms(c.startTime) / 1000}`);
      }
    }
    family(
      'container_cpu_usage_seconds_total',
      'counter',
      'Cumulative cpu time consumed by the container in core-seconds',
      podSamples.ccpu,
    );
    family('container_memory_working_set_bytes', 'gauge', 'Current working set of the container in bytes', podSamples.cmem);
    family('container_start_time_seconds', 'gauge', 'Start time of the container since unix epoch in seconds', podSamples.cstart);
    family('pod_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the pod in core-seconds', podSamples.cpu);
    family('pod_memory_working_set_bytes', 'gauge', 'Current working set of the pod in bytes', podSamples.mem);
    family('resource_scrape_error', 'gauge', '1 if there was an error while getting container metrics, 0 otherwise', [
      `resource_scrape_error ${scrapeError}`,
    ]);
    return `${out.join('\n')}\n`;
  }
}
