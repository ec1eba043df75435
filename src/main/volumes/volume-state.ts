/**
 * The volume manager's per-pod state (upstream desired and actual state of
 * the world, kept together per pod): which volumes are wanted, which are set
 * up, what is in flight and when a failed operation may be retried.
 */
import { statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { podVolumeSubpathsDir } from '../../pod/pod-dirs.js';
import { makeDirectory } from '../../common/make-dir.js';
import type { Pod } from '../../api/pod.js';
import type { PersistentSpec } from './claim-resolver.js';
import type { MountedVolume, ObjectRef, VolumePlugin } from './volume-plugin.js';

/** upstream exponentialbackoff initialDurationBeforeRetry / maxDurationBeforeRetry. */
export const RETRY_INITIAL_MS = 500;
export const RETRY_MAX_MS = 122_000;

export interface VolumeEntry {
  /** The pod's volume name; for a PV-named volume found on disk and not yet claimed, pvKey(PV name). */
  name: string;
  plugin: VolumePlugin;
  /** The directory name under volumes/<plugin>/ when it is not `name`: the PV name of a dirNamedByPV plugin. */
  dirName?: string;
  /** Its unique name when its plugin attaches it (status.volumesInUse). */
  inUseName?: string;
  /** The PersistentVolume bound to the volume's claim, as last resolved. */
  persistent?: PersistentSpec;
  /** Wanted by the pod (desired state). */
  desired: boolean;
  /** Set up by this process (actual state); the path containers bind. */
  mounted?: MountedVolume;
  /** Left on disk by an earlier process; torn down unless a pod claims it. */
  onDisk: boolean;
  remountRequired: boolean;
  inFlight: boolean;
  failures: number;
  retryAt: number;
  /** A timer is armed to retry at retryAt. */
  retryArmed: boolean;
}

export interface Waiter {
  kind: 'mount' | 'unmount';
  /** What is still waited for (upstream's "unmounted volumes=[...], ..."), the start of a failure's message. */
  status(): string;
  resolve(): void;
  reject(err: Error): void;
}

export interface PodEntry {
  uid: string;
  pod?: Pod;
  desired: boolean;
  /** Reconstructed from disk and not claimed: may be torn down once housekeeping releases it. */
  released: boolean;
  volumes: Map<string, VolumeEntry>;
  /** Problems no retry fixes, reported to the next waiter (upstream PopPodErrors). */
  errors: string[];
  refs: ObjectRef[];
  waiters: Set<Waiter>;
  /** A sync made the pod's directories: the next one checks them with a stat before any mkdir. */
  dirsMade?: boolean;
}

/**
 * mkdir -p of `path` (mode for what it creates). `likelyExists`: a stat
 * first, which settles an existing directory in one system call (a recursive
 * mkdir takes two: mkdir, then a stat on EEXIST); anything else goes to the
 * mkdir, whose failure is a FileSystemError naming `what`, the path and the
 * cause. Synchronous: a few local mkdir(2)s per pod cost the
 * main thread tens of microseconds, the promise API's thread-pool round trips
 * several times that, and a burst of new pods queued every pod's round trips
 * behind every other's (docs/architecture.md, "File system calls").
 */
export function ensureDir(path: string, mode: number, likelyExists: boolean, what = 'directory'): void {
  if (likelyExists && isDirectory(path)) return;
  makeDirectory(path, what, mode);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

export function backoffMs(failures: number): number {
  return Math.min(RETRY_INITIAL_MS * 2 ** Math.max(0, failures - 1), RETRY_MAX_MS);
}

/** A container mounts a volume with HostToContainer or Bidirectional propagation. */
export function needsPropagation(pod: Pod): boolean {
  return [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])].some((c) =>
    (c.volumeMounts ?? []).some((m) => m.mountPropagation === 'HostToContainer' || m.mountPropagation === 'Bidirectional'),
  );
}

export function newVolume(name: string, plugin: VolumePlugin, init: { desired: boolean; onDisk: boolean }): VolumeEntry {
  return { name, plugin, ...init, remountRequired: false, inFlight: false, failures: 0, retryAt: 0, retryArmed: false };
}

/** The key of a PV-named volume found on disk before a pod claims it (":" cannot occur in a pod volume name). */
export function pvKey(pvName: string): string {
  return `pv:${pvName}`;
}

/**
 * The volume names whose subPath binds go before `e` is torn down: its own;
 * for a PV-named volume found on disk and never claimed (its pod volume name
 * is unknown after a restart), every subPath directory of the pod that no
 * other volume owns.
 */
export async function subPathVolumes(podDirPath: string, entry: PodEntry, e: VolumeEntry): Promise<string[]> {
  if (e.name !== pvKey(e.dirName ?? '')) return [e.name];
  const dirs = await readdir(podVolumeSubpathsDir(podDirPath)).catch(() => [] as string[]);
  return dirs.filter((d) => !entry.volumes.has(d));
}
