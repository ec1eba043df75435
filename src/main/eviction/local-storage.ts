/**
 * Local ephemeral storage limits (upstream eviction_manager.go
 * localStorageEviction): a pod is evicted, with no grace period, when
 *  1. an emptyDir's usage exceeds its sizeLimit;
 *  2. its ephemeral storage (writable layers unless the image fs is
 *     dedicated, logs, local ephemeral volumes, /etc/hosts) exceeds the sum
 *     of its containers' ephemeral-storage limits (only when every container
 *     sets one, as upstream PodRequestsAndLimits);
 *  3. a container's logs (and writable layer unless the image fs is
 *     dedicated) exceed its own ephemeral-storage limit.
 * First match per pod wins. Pure: decides, the manager acts.
 */
import type { Pod } from '../../api/pod.js';
import { formatBytes, formatDecimalInteger, value } from '../../api/quantity.js';
import type { PodUsage } from './eviction-stats.js';
import { canonicalQuantity, podDiskUsage, type FsStatsType, type StatsFunc } from './ranking.js';

export interface StorageViolation {
  pod: Pod;
  message: string;
  /** The evictions metric's label (upstream signalEmptyDirFsLimit, ...). */
  signal: 'emptydirfs.limit' | 'ephemeralpodfs.limit' | 'ephemeralcontainerfs.limit';
}

function bytes(raw: string | undefined): bigint | undefined {
  if (raw === undefined) return undefined;
  try {
    return value(raw);
  } catch {
    return undefined;
  }
}

function emptyDirViolation(pod: Pod, u: PodUsage): StorageViolation | undefined {
  for (const v of pod.spec.volumes ?? []) {
    const limit = bytes(v.emptyDir?.sizeLimit);
    if (limit === undefined || limit <= 0n) continue;
    const usedBytes = u.volumes.find((x) => x.name === v.name)?.usedBytes;
    if (usedBytes !== undefined && usedBytes > limit) {
      return {
        pod,
        signal: 'emptydirfs.limit',
        message: `Usage of EmptyDir volume "${v.name}" exceeds the limit "${canonicalQuantity(v.emptyDir?.sizeLimit)}". `,
      };
    }
  }
  return undefined;
}

/**
 * Upstream PodRequestsAndLimits' ephemeral-storage limit: the sum over the containers that set one (the
 * largest init container's if larger), printed in the format of the first one, as Quantity.Add keeps it.
 */
function podStorageLimit(pod: Pod): { limit: bigint; text: string } | undefined {
  let sum: bigint | undefined;
  let first: string | undefined;
  for (const c of pod.spec.containers ?? []) {
    const raw = c.resources?.limits?.['ephemeral-storage'];
    const l = bytes(raw);
    if (l === undefined) continue;
    first ??= raw;
    sum = (sum ?? 0n) + l;
  }
  for (const c of pod.spec.initContainers ?? []) {
    const raw = c.resources?.limits?.['ephemeral-storage'];
    const l = bytes(raw);
    if (l === undefined) continue;
    first ??= raw;
    if (sum === undefined || l > sum) sum = l;
  }
  if (sum === undefined) return undefined;
  const binary = /[KMGTPE]i$/.test(first ?? '');
  return { limit: sum, text: binary ? formatBytes(sum) : formatDecimalInteger(sum) };
}

function podViolation(pod: Pod, u: PodUsage, dedicatedImageFs: boolean): StorageViolation | undefined {
  const pl = podStorageLimit(pod);
  if (pl === undefined) return undefined;
  const measure: FsStatsType[] = dedicatedImageFs ? ['logs', 'localVolumeSource'] : ['root', 'logs', 'localVolumeSource'];
  const usage = podDiskUsage(u, pod, measure, true).bytes + (u.etcHostsBytes ?? 0n);
  if (usage <= pl.limit) return undefined;
  return {
    pod,
    signal: 'ephemeralpodfs.limit',
    message: `Pod ephemeral local storage usage exceeds the total limit of containers ${pl.text}. `,
  };
}

function containerViolation(pod: Pod, u: PodUsage, dedicatedImageFs: boolean): StorageViolation | undefined {
  for (const cs of u.containers) {
    const c = (pod.spec.containers ?? []).find((x) => x.name === cs.name);
    const raw = c?.resources?.limits?.['ephemeral-storage'];
    const limit = bytes(raw);
    if (limit === undefined || limit === 0n) continue;
    const usedBytes = (cs.logs?.usedBytes ?? 0n) + (dedicatedImageFs ? 0n : (cs.rootfs?.usedBytes ?? 0n));
    if (usedBytes > limit) {
      return {
        pod,
        signal: 'ephemeralcontainerfs.limit',
        message: `Container ${cs.name} exceeded its local ephemeral storage limit "${canonicalQuantity(raw)}". `,
      };
    }
  }
  return undefined;
}

export function storageLimitViolations(pods: readonly Pod[], stats: StatsFunc, dedicatedImageFs: boolean): StorageViolation[] {
  const out: StorageViolation[] = [];
  for (const pod of pods) {
    const u = stats(pod);
    if (!u) continue;
    const v = emptyDirViolation(pod, u) ?? podViolation(pod, u, dedicatedImageFs) ?? containerViolation(pod, u, dedicatedImageFs);
    if (v) out.push(v);
  }
  return out;
}

/**
 * Whether the pod sets a limit that storageLimitViolations checks (an emptyDir
 * sizeLimit or an ephemeral-storage limit): a pod without one is never
 * evicted for its local storage, so its figures need not be read for it.
 */
export function hasStorageLimits(pod: Pod): boolean {
  if ((pod.spec.volumes ?? []).some((v) => v.emptyDir?.sizeLimit !== undefined)) return true;
  const containers = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])];
  return containers.some((c) => c.resources?.limits?.['ephemeral-storage'] !== undefined);
}
