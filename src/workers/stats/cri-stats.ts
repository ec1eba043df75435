/**
 * The `criStats` pool task: the CRI's view of resource usage (upstream
 * criStatsProvider's inputs): ListPodSandbox, ListContainers,
 * ListContainerStats, ListPodSandboxStats (CRI v1.23 and later; v1.20 reads pod
 * stats from cadvisor) and ImageFsInfo, decoded here, off
 * the main thread, into a compact snapshot of plain numbers. Only ready
 * sandboxes and their running containers count, as upstream.
 *
 * Every ready sandbox is reported. A pod whose sandbox stats the runtime
 * cannot give gets CPU and memory summed from its containers (upstream
 * criStatsProvider.addPodCPUMemoryStats when the pod cgroup's stats are
 * missing): a runtime without ListPodSandboxStats (UNIMPLEMENTED), or one
 * whose list fails as a whole, as containerd 1.6 does for any sandbox created
 * without a cgroup parent ("cgroupPath is empty"); after such a failure each
 * sandbox is asked alone (PodSandboxStats), and the ones that fail go without.
 * A sandbox that failed for want of a cgroup path is remembered
 * (SandboxesWithoutStats) and neither it nor the list is asked again while it
 * lives: its cgroup parent is fixed when it is created.
 *
 * A pod's network is the runtime's when its sandbox stats carry one (a zero
 * timestamp, as containerd 1.6 leaves it, becomes the sample's time);
 * otherwise it is read as upstream v1.20 reads it through cadvisor from the
 * infra container: /proc/<pid>/net/dev of the sandbox's process (its pid from
 * the verbose PodSandboxStatus) when `procNetwork` is asked (the full
 * summary; eviction does not use network). For a host-network sandbox that
 * is the host's namespace, as cadvisor reports every containerd sandbox.
 */
import type { CriApi } from '../../cri/client.js';
import { CriError } from '../../common/errors.js';
import { GrpcStatus } from '../../common/rpc-error.js';
import { readNetDev, type InterfaceCounters } from '../../common/net-dev.js';
import { ContainerState, PodSandboxState, type ContainerStats, type MemoryUsage, type PodSandboxStats } from '../../gen/runtime/v1/api.js';
import { Semaphore } from '../../common/semaphore.js';
import type { ContainerStatsSample, CpuSample, CriStatsSnapshot, MemorySample, PodStatsSample } from '../protocol/stats-wire.js';

export interface CriStatsOptions {
  /** Read the network of pods the runtime gives none for from /proc (a PodSandboxStatus call each); default off. */
  procNetwork?: boolean;
  /** The interfaces of the network namespace of a process (default: its /proc/<pid>/net/dev). */
  netDev?: (pid: number) => InterfaceCounters[] | undefined;
  /** ns since the epoch (default: the wall clock). */
  nowNs?: () => bigint;
  /** What earlier snapshots learnt (kept by the caller across calls; default: nothing, every sandbox is asked). */
  withoutStats?: SandboxesWithoutStats;
}

/**
 * The sandboxes the runtime cannot give stats for, by id, learnt from
 * failures: containerd 1.6 fails PodSandboxStats with "cgroupPath is empty"
 * for a sandbox created without a cgroup parent (cgroupsPerQOS false), for the
 * sandbox's whole life, and fails ListPodSandboxStats as a whole while any such
 * sandbox exists. Without this memory every snapshot (eviction's, every 10 s)
 * made one call per sandbox: 46,000 calls in 10 minutes at 1000 pods.
 * Forgets the sandboxes that are gone.
 */
export class SandboxesWithoutStats {
  private readonly ids = new Set<string>();

  /** Whether the list is worth asking: it fails while any known sandbox without stats is ready. */
  get listMayWork(): boolean {
    return this.ids.size === 0;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Notes a sandbox's failed stats call; only a missing cgroup path is known to last. */
  noteFailure(id: string, err: unknown): void {
    if (err instanceof CriError && err.message.includes('cgroupPath is empty')) this.ids.add(id);
  }

  /** Keeps only the sandboxes still ready. */
  retain(ready: ReadonlySet<string>): void {
    for (const id of this.ids) if (!ready.has(id)) this.ids.delete(id);
  }
}

const u = (v: { value: bigint } | undefined) => v?.value;

function cpuOf(c: ContainerStats['cpu']): CpuSample | undefined {
  if (!c?.usageCoreNanoSeconds) return undefined;
  return {
    time: c.timestamp,
    usageCoreNanoSeconds: c.usageCoreNanoSeconds.value,
    ...(c.usageNanoCores && { usageNanoCores: c.usageNanoCores.value }),
  };
}

function memoryOf(m: MemoryUsage | undefined): MemorySample | undefined {
  if (!m) return undefined;
  return {
    time: m.timestamp,
    workingSetBytes: u(m.workingSetBytes),
    usageBytes: u(m.usageBytes),
    rssBytes: u(m.rssBytes),
    availableBytes: u(m.availableBytes),
    pageFaults: u(m.pageFaults),
    majorPageFaults: u(m.majorPageFaults),
  };
}

/**
 * Sandbox stats calls of this thread, one at a time: containerd 1.6 updates
 * its sandbox store's CPU sample without a lock in PodSandboxStats (and in
 * ListPodSandboxStats, which makes the same call per sandbox), so two such
 * calls at once can end the daemon with "fatal error: concurrent map writes".
 * It did here: CI's containerd died in sandbox_stats_linux.go while calls were
 * in flight in parallel. The Go kubelet v1.20 takes pod stats from cadvisor
 * and never makes these calls.
 */
const sandboxStatsCalls = new Semaphore(1);

/** ListPodSandboxStats by sandbox id: empty when the runtime lacks it, undefined when the list failed. */
async function listSandboxStats(cri: CriApi): Promise<Map<string, PodSandboxStats> | undefined> {
  try {
    const r = await sandboxStatsCalls.run(() => cri.listPodSandboxStats({}));
    return new Map(r.stats.map((s) => [s.attributes?.id ?? '', s]));
  } catch (err) {
    if (!(err instanceof CriError)) throw err;
    return err.grpcCode === GrpcStatus.UNIMPLEMENTED ? new Map() : undefined;
  }
}

/** PodSandboxStats of each sandbox not known to lack them; those that fail are missing. */
async function eachSandboxStats(cri: CriApi, ids: readonly string[], memo: SandboxesWithoutStats): Promise<Map<string, PodSandboxStats>> {
  const out = new Map<string, PodSandboxStats>();
  for (const podSandboxId of ids) {
    if (memo.has(podSandboxId)) continue;
    const r = await sandboxStatsCalls
      .run(() => cri.podSandboxStats({ podSandboxId }))
      .catch((err: unknown) => memo.noteFailure(podSandboxId, err));
    if (r?.stats) out.set(podSandboxId, r.stats);
  }
  return out;
}

/** The sandbox's process id from containerd's verbose PodSandboxStatus info ({"pid": N, ...}). */
async function sandboxPid(cri: CriApi, podSandboxId: string): Promise<number | undefined> {
  const r = await cri.podSandboxStatus({ podSandboxId, verbose: true });
  try {
    const pid = (JSON.parse(r.info.info ?? '{}') as { pid?: unknown }).pid;
    return typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Network of the pods the runtime gave none for, from their sandbox process's namespace; failures go without. */
async function addNetworkFromProc(cri: CriApi, pods: PodStatsSample[], o: Required<CriStatsOptions>): Promise<void> {
  await Promise.all(
    pods
      .filter((p) => p.network === undefined)
      .map(async (p) => {
        const pid = await sandboxPid(cri, p.sandboxId).catch(() => undefined);
        const interfaces = pid === undefined ? undefined : o.netDev(pid);
        if (interfaces) p.network = { time: o.nowNs(), interfaces };
      }),
  );
}

const wallNs = () => BigInt(Date.now()) * 1_000_000n;

const sum = (xs: (bigint | undefined)[]) => (xs.some((x) => x !== undefined) ? xs.reduce<bigint>((a, x) => a + (x ?? 0n), 0n) : undefined);

export async function criStats(cri: CriApi, opts: CriStatsOptions = {}): Promise<CriStatsSnapshot> {
  const o: Required<CriStatsOptions> = {
    procNetwork: opts.procNetwork ?? false,
    netDev: opts.netDev ?? readNetDev,
    nowNs: opts.nowNs ?? wallNs,
    withoutStats: opts.withoutStats ?? new SandboxesWithoutStats(),
  };
  const memo = o.withoutStats;
  const [sandboxes, containers, stats, listed, fsInfo] = await Promise.all([
    cri.listPodSandbox({ filter: { state: { state: PodSandboxState.SANDBOX_READY } } }),
    cri.listContainers({ filter: { state: { state: ContainerState.CONTAINER_RUNNING } } }),
    cri.listContainerStats({}),
    memo.listMayWork ? listSandboxStats(cri) : undefined,
    cri.imageFsInfo({}).catch(() => undefined),
  ]);
  const ids = sandboxes.items.map((s) => s.id);
  memo.retain(new Set(ids));
  const podStats = listed ?? (await eachSandboxStats(cri, ids, memo));
  const statsById = new Map(stats.stats.map((s) => [s.attributes?.id ?? '', s]));
  const bySandbox = new Map<string, ContainerStatsSample[]>();
  for (const c of containers.containers) {
    const s = statsById.get(c.id);
    const sample: ContainerStatsSample = {
      id: c.id,
      name: c.metadata?.name ?? '',
      createdAt: c.createdAt,
      cpu: cpuOf(s?.cpu),
      memory: memoryOf(s?.memory),
      rootfs: s?.writableLayer
        ? { time: s.writableLayer.timestamp, usedBytes: u(s.writableLayer.usedBytes), inodesUsed: u(s.writableLayer.inodesUsed) }
        : undefined,
    };
    let list = bySandbox.get(c.podSandboxId);
    if (!list) bySandbox.set(c.podSandboxId, (list = []));
    list.push(sample);
  }
  const pods: PodStatsSample[] = [];
  for (const sb of sandboxes.items) {
    const list = bySandbox.get(sb.id) ?? [];
    const ps = podStats.get(sb.id)?.linux;
    const pod: PodStatsSample = {
      uid: sb.metadata?.uid ?? '',
      name: sb.metadata?.name ?? '',
      namespace: sb.metadata?.namespace ?? '',
      sandboxId: sb.id,
      createdAt: sb.createdAt,
      containers: list,
    };
    if (ps) {
      pod.cpu = cpuOf(ps.cpu);
      pod.memory = memoryOf(ps.memory);
      if (ps.network) {
        pod.network = {
          time: ps.network.timestamp || ps.cpu?.timestamp || o.nowNs(),
          defaultName: ps.network.defaultInterface?.name,
          interfaces: (ps.network.interfaces.length > 0 ? ps.network.interfaces : [ps.network.defaultInterface])
            .filter((i) => i !== undefined)
            .map((i) => ({ name: i.name, rxBytes: u(i.rxBytes), rxErrors: u(i.rxErrors), txBytes: u(i.txBytes), txErrors: u(i.txErrors) })),
        };
      }
      pod.processCount = u(ps.process?.processCount);
    } else if (list.length > 0) {
      const time = list.reduce((t, c) => (c.cpu && c.cpu.time > t ? c.cpu.time : t), 0n);
      const core = sum(list.map((c) => c.cpu?.usageCoreNanoSeconds));
      if (core !== undefined) pod.cpu = { time, usageCoreNanoSeconds: core };
      pod.memory = {
        time,
        workingSetBytes: sum(list.map((c) => c.memory?.workingSetBytes)),
        usageBytes: sum(list.map((c) => c.memory?.usageBytes)),
      };
    }
    pods.push(pod);
  }
  if (o.procNetwork) await addNetworkFromProc(cri, pods, o);
  const fs = fsInfo?.imageFilesystems[0];
  return {
    pods,
    ...(fs && {
      imageFs: { time: fs.timestamp, usedBytes: u(fs.usedBytes), inodesUsed: u(fs.inodesUsed), mountpoint: fs.fsId?.mountpoint },
    }),
  };
}
