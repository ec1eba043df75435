/**
 * The order in which pods are evicted for a starved resource, and what an
 * evicted pod is told (upstream helpers.go rankMemoryPressure,
 * rankPIDPressure, rankDiskPressureFunc, podDiskUsage, evictionMessage).
 *
 * - memory: pods whose working set exceeds their memory request first, then
 *   lower priority first, then the largest usage above the request.
 * - disk (bytes or inodes): the same with the pod's disk usage over the file
 *   systems the signal covers (writable layers, logs, local volumes) against
 *   its ephemeral-storage request.
 * - pids: lower priority first, then more processes.
 * A pod without stats ranks before every pod with stats (upstream cmpBool on
 * "not found"). The sort is stable, so ties keep the active pods' order.
 * Pure; main thread.
 */
import type { Pod } from '../../api/pod.js';
import { formatBytes, formatDecimalInteger, parseQuantity, value } from '../../api/quantity.js';
import { isMirrorPod, isStaticPod } from '../podconfig/types.js';
import { podResourceRequests } from '../admission/resources.js';
import type { FsUsage, PodUsage } from './eviction-stats.js';
import type { ReclaimResource, Signal } from './thresholds.js';

/** Which of a pod's file systems a disk signal counts (upstream fsStatsType). */
export type FsStatsType = 'root' | 'logs' | 'localVolumeSource';

export type StatsFunc = (pod: Pod) => PodUsage | undefined;
type Cmp = (a: Pod, b: Pod) => number;

/** Upstream SystemCriticalPriority. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Upstream kubelettypes.IsCriticalPod: static, mirror, or priority at least system-critical. */
export function isCriticalPod(pod: Pod): boolean {
  return isStaticPod(pod) || isMirrorPod(pod) || (pod.spec.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
}

export function statsFuncOf(pods: readonly PodUsage[]): StatsFunc {
  const byUid = new Map(pods.map((p) => [p.uid, p]));
  return (pod) => byUid.get(pod.metadata.uid ?? '');
}

const cmpBool = (a: boolean, b: boolean) => (a === b ? 0 : !b ? -1 : 1);
const cmpBig = (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1);

function request(pod: Pod, resource: string): bigint {
  try {
    return podResourceRequests(pod)[resource] ?? 0n;
  } catch {
    return 0n;
  }
}

const priority: Cmp = (a, b) => Math.sign((a.spec.priority ?? 0) - (b.spec.priority ?? 0));

/**
 * Compares two pods by a figure measured from their stats; a pod without stats comes first. Each pod is
 * measured once per ranking (the figures parse quantities), so a sort of n pods measures n times.
 */
function withStats<T>(stats: StatsFunc, measure: (u: PodUsage, p: Pod) => T, cmp: (a: T, b: T) => number): Cmp {
  const memo = new Map<Pod, { v: T } | undefined>();
  const get = (p: Pod) => {
    if (memo.has(p)) return memo.get(p);
    const u = stats(p);
    const r = u && { v: measure(u, p) };
    memo.set(p, r);
    return r;
  };
  return (pa, pb) => {
    const sa = get(pa);
    const sb = get(pb);
    if (!sa || !sb) return cmpBool(!sa, !sb);
    return cmp(sa.v, sb.v);
  };
}

const memoryOf = (u: PodUsage) => u.memoryWorkingSetBytes ?? 0n;

const used = (f: FsUsage | undefined, inodes: boolean) => (inodes ? f?.inodesUsed : f?.usedBytes) ?? 0n;

/**
 * The pod's volumes whose usage counts against it: upstream localVolumeNames
 * (hostPath, emptyDir not in memory, configMap, gitRepo) for ranking, or, with
 * `ephemeralOnly`, IsLocalEphemeralVolume (emptyDir not in memory, configMap,
 * gitRepo, downwardAPI) for the ephemeral-storage limit.
 */
export function localVolumeNames(pod: Pod, ephemeralOnly = false): string[] {
  const out: string[] = [];
  for (const v of pod.spec.volumes ?? []) {
    const src = v as Record<string, unknown>;
    const emptyDisk = v.emptyDir !== undefined && v.emptyDir.medium !== 'Memory';
    const both = emptyDisk || src['configMap'] !== undefined || src['gitRepo'] !== undefined;
    const only = ephemeralOnly ? src['downwardAPI'] !== undefined : v.hostPath !== undefined;
    if (both || only) out.push(v.name);
  }
  return out;
}

/** Upstream podDiskUsage (bytes and inodes of the measured file systems). */
export function podDiskUsage(
  u: PodUsage,
  pod: Pod,
  measure: readonly FsStatsType[],
  ephemeralOnly = false,
): { bytes: bigint; inodes: bigint } {
  let bytes = 0n;
  let inodes = 0n;
  for (const c of u.containers) {
    if (measure.includes('root')) {
      bytes += used(c.rootfs, false);
      inodes += used(c.rootfs, true);
    }
    if (measure.includes('logs')) {
      bytes += used(c.logs, false);
      inodes += used(c.logs, true);
    }
  }
  if (measure.includes('localVolumeSource')) {
    const names = new Set(localVolumeNames(pod, ephemeralOnly));
    for (const v of u.volumes) {
      if (!names.has(v.name)) continue;
      bytes += used(v, false);
      inodes += used(v, true);
    }
  }
  return { bytes, inodes };
}

function orderedBy(pods: Pod[], cmps: Cmp[]): void {
  // Array.prototype.sort is stable; upstream's sort.Sort is not, so ties may come out in another order there.
  pods.sort((a, b) => {
    for (const c of cmps) {
      const r = c(a, b);
      if (r !== 0) return r;
    }
    return 0;
  });
}

export function rankMemoryPressure(pods: Pod[], stats: StatsFunc): void {
  const exceeds = withStats(
    stats,
    (u, p) => memoryOf(u) > request(p, 'memory'),
    (a, b) => cmpBool(a, b),
  );
  const aboveRequest = withStats(
    stats,
    (u, p) => memoryOf(u) - request(p, 'memory'),
    (a, b) => cmpBig(b, a),
  );
  orderedBy(pods, [exceeds, priority, aboveRequest]);
}

export function rankPidPressure(pods: Pod[], stats: StatsFunc): void {
  const processes = withStats(
    stats,
    (u) => u.processes ?? 0,
    (a, b) => b - a,
  );
  orderedBy(pods, [priority, processes]);
}

export function rankDiskPressure(pods: Pod[], stats: StatsFunc, measure: readonly FsStatsType[], inodes: boolean): void {
  const usage = (u: PodUsage, p: Pod) => {
    const d = podDiskUsage(u, p, measure);
    return inodes ? d.inodes : d.bytes;
  };
  // Inodes have no request (0); bytes are weighed against the ephemeral-storage request.
  const req = (p: Pod) => (inodes ? 0n : request(p, 'ephemeral-storage'));
  const exceeds = withStats(stats, (u, p) => usage(u, p) > req(p), cmpBool);
  const above = withStats(
    stats,
    (u, p) => usage(u, p) - request(p, 'ephemeral-storage'),
    (a, b) => cmpBig(b, a),
  );
  orderedBy(pods, [exceeds, priority, above]);
}

/** Upstream buildSignalToRankFunc. */
export function rankFor(signal: Signal, dedicatedImageFs: boolean): (pods: Pod[], stats: StatsFunc) => void {
  const all: FsStatsType[] = ['root', 'logs', 'localVolumeSource'];
  const disk = (measure: FsStatsType[], inodes: boolean) => (pods: Pod[], stats: StatsFunc) =>
    rankDiskPressure(pods, stats, measure, inodes);
  switch (signal) {
    case 'memory.available':
    case 'allocatableMemory.available':
      return rankMemoryPressure;
    case 'pid.available':
      return rankPidPressure;
    case 'nodefs.available':
      return disk(dedicatedImageFs ? ['logs', 'localVolumeSource'] : all, false);
    case 'nodefs.inodesFree':
      return disk(dedicatedImageFs ? ['logs', 'localVolumeSource'] : all, true);
    case 'imagefs.available':
    case 'containerfs.available':
      return disk(dedicatedImageFs ? ['root'] : all, false);
    case 'imagefs.inodesFree':
    case 'containerfs.inodesFree':
      return disk(dedicatedImageFs ? ['root'] : all, true);
  }
}

/** A configured quantity as upstream's Quantity.String() prints it (canonical form). */
export function canonicalQuantity(raw: string | undefined): string {
  if (raw === undefined) return '0';
  try {
    const q = parseQuantity(raw);
    return q.format === 'BinarySI' ? formatBytes(value(q)) : formatDecimalInteger(value(q));
  } catch {
    return raw;
  }
}

/** Upstream evictionMessage: the starved resource, and each container using more of it than it requested. */
export function evictionMessage(resource: ReclaimResource, pod: Pod, stats: StatsFunc): string {
  let message = `The node was low on resource: ${resource}. `;
  const u = stats(pod);
  if (!u || (resource !== 'memory' && resource !== 'ephemeral-storage')) return message;
  for (const cs of u.containers) {
    const c = (pod.spec.containers ?? []).find((x) => x.name === cs.name);
    if (!c) continue;
    const rawRequest = c.resources?.requests?.[resource];
    let usage: bigint | undefined;
    if (resource === 'memory') usage = cs.memoryWorkingSetBytes;
    else if (cs.rootfs?.usedBytes !== undefined && cs.logs?.usedBytes !== undefined) usage = cs.rootfs.usedBytes + cs.logs.usedBytes;
    let req: bigint;
    try {
      req = rawRequest !== undefined ? value(rawRequest) : 0n;
    } catch {
      req = 0n;
    }
    if (usage !== undefined && usage > req) {
      message += `Container ${c.name} was using ${formatBytes(usage)}, which exceeds its request of ${canonicalQuantity(rawRequest)}. `;
    }
  }
  return message;
}
