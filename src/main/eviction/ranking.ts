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

/**
 * A pod's requests, parsed once per pod object: pod specs are replaced, not edited, when a source updates
 * them (and requests are immutable in the API), so the cache follows the object. Malformed: nothing requested.
 */
const requestsCache = new WeakMap<Pod, Record<string, bigint>>();
function request(pod: Pod, resource: string): bigint {
  let r = requestsCache.get(pod);
  if (!r) {
    try {
      r = podResourceRequests(pod);
    } catch {
      r = {};
    }
    requestsCache.set(pod, r);
  }
  return r[resource] ?? 0n;
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

/**
 * Sorts pods by a key computed once per pod (the figures parse quantities, so a comparator that measured
 * would cost n log n parses): keys compare element by element, smaller first. Array.prototype.sort is stable;
 * upstream's sort.Sort is not, so pods that tie may come out in another order there.
 */
function sortByKey(pods: Pod[], key: (p: Pod) => (number | bigint)[]): void {
  const keys = new Map(pods.map((p) => [p, key(p)]));
  pods.sort((a, b) => {
    const ka = keys.get(a)!;
    const kb = keys.get(b)!;
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
  });
}

const priorityOf = (p: Pod) => p.spec.priority ?? 0;

/**
 * The key of upstream's orderedBy(exceeds, priority, aboveRequest): a pod without stats loses every
 * comparison that needs stats (it comes first), so two such pods compare by priority alone.
 */
function exceedsPriorityAbove(stats: StatsFunc, usageOf: (u: PodUsage, p: Pod) => bigint, requestOf: (p: Pod) => bigint) {
  return (p: Pod): (number | bigint)[] => {
    const u = stats(p);
    if (!u) return [0, 0, priorityOf(p), 0n];
    const used = usageOf(u, p);
    const req = requestOf(p);
    return [1, used > req ? 0 : 1, priorityOf(p), req - used];
  };
}

export function rankMemoryPressure(pods: Pod[], stats: StatsFunc): void {
  sortByKey(
    pods,
    exceedsPriorityAbove(stats, memoryOf, (p) => request(p, 'memory')),
  );
}

/** Upstream orderedBy(priority, process): priority, then (with stats) more processes first. */
export function rankPidPressure(pods: Pod[], stats: StatsFunc): void {
  sortByKey(pods, (p) => {
    const u = stats(p);
    return u ? [priorityOf(p), 1, -(u.processes ?? 0)] : [priorityOf(p), 0, 0];
  });
}

export function rankDiskPressure(pods: Pod[], stats: StatsFunc, measure: readonly FsStatsType[], inodes: boolean): void {
  // Inodes have no request (0) for "exceeds"; the usage above request subtracts the ephemeral-storage request either way, as upstream.
  sortByKey(pods, (p) => {
    const u = stats(p);
    if (!u) return [0, 0, priorityOf(p), 0n];
    const d = podDiskUsage(u, p, measure);
    const used = inodes ? d.inodes : d.bytes;
    const storage = request(p, 'ephemeral-storage');
    return [1, used > (inodes ? 0n : storage) ? 0 : 1, priorityOf(p), storage - used];
  });
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
