/**
 * emptyDir volumes (upstream pkg/volume/emptydir): a directory under the pod's
 * volumes, on the node's disk (medium "") or on a tmpfs (medium "Memory")
 * sized as upstream's calculateEmptyDirMemorySize. A "ready" file in the
 * plugin's metadata directory marks a finished setup, so a setup repeated
 * after an agent restart finds the volume and mounts nothing twice.
 *
 * The same directory logic backs the volumes upstream "wraps" in an emptyDir:
 * configMap (disk), secret, downwardAPI and projected (memory).
 */
import { access, chmod, lstat, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Volume } from '../../api/core-v1.js';
import type { Pod } from '../../api/pod.js';
import { value } from '../../api/quantity.js';
import { VolumeError } from '../../common/errors.js';
import { makeDirectoryAsync } from '../../common/make-dir.js';
import { isMountPoint, mountsUnder, removeAllUnmounted } from '../../common/mounter.js';
import { pluginMetaDir, podDir, volumeDir } from '../../pod/pod-dirs.js';
import type { MountedVolume, VolumeHost, VolumePlugin } from './volume-plugin.js';
import { setVolumeOwnership } from './volume-ownership.js';

export const EMPTY_DIR_PLUGIN = 'kubernetes.io/empty-dir';
/** Upstream emptydir perm. */
const EMPTY_DIR_PERM = 0o777;
const READY_FILE = 'ready';

export type StorageMedium = '' | 'Memory';

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

function quantityBytes(raw: string | number | undefined): bigint | undefined {
  if (raw === undefined || raw === '') return undefined;
  return value(String(raw));
}

/**
 * The pod's memory limit as its cgroup would get it (upstream
 * ResourceConfigForPod): only when every regular container declares one;
 * max(sum of containers, each init container) plus overhead.
 */
export function podMemoryLimitBytes(pod: Pod): bigint | undefined {
  const containers = pod.spec.containers ?? [];
  if (containers.length === 0) return undefined;
  let sum = 0n;
  for (const c of containers) {
    const l = quantityBytes(c.resources?.limits?.['memory']);
    if (!l) return undefined;
    sum += l;
  }
  for (const c of pod.spec.initContainers ?? []) {
    const l = quantityBytes(c.resources?.limits?.['memory']) ?? 0n;
    if (l > sum) sum = l;
  }
  const overhead = pod.spec['overhead'];
  return sum + (quantityBytes(overhead?.['memory']) ?? 0n);
}

/**
 * Upstream calculateEmptyDirMemorySize (SizeMemoryBackedVolumes): node
 * allocatable memory, lowered to the pod's memory limit, lowered to the
 * volume's sizeLimit; each only when positive and smaller.
 */
export function memoryVolumeSizeBytes(nodeAllocatableMemory: string, pod: Pod, sizeLimit: string | undefined): bigint {
  let size = value(nodeAllocatableMemory);
  const podLimit = podMemoryLimitBytes(pod);
  if (podLimit !== undefined && podLimit > 0n && podLimit <= size) size = podLimit;
  const limit = quantityBytes(sizeLimit);
  if (limit !== undefined && limit > 0n && limit <= size) size = limit;
  return size;
}

/** Creates `dir` with mode 0777 whatever the umask (upstream setupDir). */
async function setupDir(dir: string): Promise<void> {
  await makeDirectoryAsync(dir, 'the emptyDir volume directory', EMPTY_DIR_PERM);
  const st = await lstat(dir);
  if ((st.mode & 0o777) !== EMPTY_DIR_PERM) await chmod(dir, EMPTY_DIR_PERM);
}

async function setReady(metaDir: string): Promise<void> {
  await makeDirectoryAsync(metaDir, 'the emptyDir metadata directory', 0o750);
  await writeFile(join(metaDir, READY_FILE), '', { mode: 0o600 });
}

/**
 * Sets up an emptyDir-backed directory. Idempotent: a ready volume is left
 * alone; a memory volume already mounted as tmpfs is not mounted again.
 */
export async function setUpEmptyDir(
  host: VolumeHost,
  dir: string,
  metaDir: string,
  medium: StorageMedium,
  sizeBytes: bigint | undefined,
): Promise<void> {
  const ready = await exists(join(metaDir, READY_FILE));
  if (medium === 'Memory') {
    const mounts = await host.mounter.list();
    const mounted = mounts.find((m) => m.mountPoint === dir);
    if (ready && mounted) return;
    await setupDir(dir);
    if (!mounted) {
      const options = sizeBytes !== undefined && sizeBytes > 0n ? [`size=${sizeBytes}`] : [];
      await host.mounter.mount('tmpfs', dir, 'tmpfs', options);
    } else if (mounted.fsType !== 'tmpfs') {
      throw new VolumeError(`${dir} is already a mount point of a ${mounted.fsType} filesystem; expected tmpfs`);
    }
  } else {
    if (ready && (await exists(dir))) return;
    if (ready) host.logger.warn({ dir }, 'Volume ready file exists but the volume directory does not; setting it up again');
    await setupDir(dir);
  }
  await setReady(metaDir);
}

/** Tears down an emptyDir-backed directory: unmounts a tmpfs, removes the directory and its ready file. */
export async function tearDownEmptyDir(host: VolumeHost, dir: string, metaDir: string): Promise<void> {
  await rm(metaDir, { recursive: true, force: true });
  if (!(await exists(dir))) return;
  const mounts = await host.mounter.list();
  if (isMountPoint(mounts, dir)) await host.mounter.unmount(dir);
  else if (mountsUnder(mounts, dir).length > 0) throw new VolumeError(`cannot tear down ${dir}: something is mounted below it`);
  await removeAllUnmounted(host.mounter, dir);
}

/** The medium of an emptyDir source, or the problem with one kubelet-ts does not support. */
export function emptyDirMedium(medium: string | undefined): { medium: StorageMedium } | { problem: string } {
  if (!medium) return { medium: '' };
  if (medium === 'Memory') return { medium: 'Memory' };
  if (medium.startsWith('HugePages'))
    return { problem: `emptyDir medium ${JSON.stringify(medium)}: huge pages are not supported by kubelet-ts` };
  return { problem: `unknown storage medium ${JSON.stringify(medium)}` };
}

export const emptyDirPlugin: VolumePlugin = {
  name: EMPTY_DIR_PLUGIN,
  requiresRemount: false,
  canSupport: (v: Volume) => v.emptyDir !== undefined,
  check(_pod, v) {
    const m = emptyDirMedium(v.emptyDir?.medium);
    return 'problem' in m ? m.problem : undefined;
  },
  async setUp(pod, v, host): Promise<MountedVolume> {
    const uid = pod.metadata.uid ?? '';
    const pd = podDir(host.rootDir, uid);
    const dir = volumeDir(pd, EMPTY_DIR_PLUGIN, v.name);
    const m = emptyDirMedium(v.emptyDir?.medium);
    if ('problem' in m) throw new VolumeError(m.problem);
    const medium = m.medium;
    const size = medium === 'Memory' ? memoryVolumeSizeBytes(host.nodeAllocatable.memory, pod, v.emptyDir?.sizeLimit) : undefined;
    await setUpEmptyDir(host, dir, pluginMetaDir(pd, EMPTY_DIR_PLUGIN, v.name), medium, size);
    await setVolumeOwnership(dir, pod, false);
    return { path: dir, readOnly: false };
  },
  async tearDown(uid, name, host) {
    const pd = podDir(host.rootDir, uid);
    await tearDownEmptyDir(host, volumeDir(pd, EMPTY_DIR_PLUGIN, name), pluginMetaDir(pd, EMPTY_DIR_PLUGIN, name));
  },
};
