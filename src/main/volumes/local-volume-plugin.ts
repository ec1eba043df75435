/**
 * Local PersistentVolumes (upstream pkg/volume/local), filesystem mode: the
 * PV's `local.path` (a directory on this node) bind-mounted at
 * pods/<uid>/volumes/kubernetes.io~local-volume/<pvName>, read-only when the
 * claim source says so, with the PV's mountOptions.
 *
 * Contracts:
 *  - setUp is idempotent: a directory already mounted is left as it is.
 *  - fsGroup ownership is applied only to a writable volume that no other
 *    pod mounts yet (upstream: "written only once on the first volume
 *    mount"); when another pod has it with a different group, the pod gets
 *    upstream's AlreadyMountedVolume warning.
 *  - A local path that is a block device (the PV's fsType, formatted and
 *    mounted by the kubelet upstream) is refused with a clear message.
 *  - tearDown unmounts and removes the directory (upstream
 *    CleanupMountPoint); it knows only the pod UID and the PV name.
 */
import { lstat, realpath, rmdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { VolumeError } from '../../common/errors.js';
import { makeDirectoryAsync } from '../../common/make-dir.js';
import { isMountPoint, type MountInfo } from '../../common/mounter.js';
import { podDir, podsDir, volumeDir } from '../../pod/pod-dirs.js';
import { podReference } from '../events/event-recorder.js';
import { hasBacksteps } from './host-path-plugin.js';
import { fsGroupOf, setVolumeOwnership } from './volume-ownership.js';
import type { MountedVolume, VolumePlugin } from './volume-plugin.js';

export const LOCAL_VOLUME_PLUGIN = 'kubernetes.io/local-volume';

/**
 * The other mount points of what is mounted at (or contains) `path`
 * (upstream mount-utils GetMountRefs / SearchMountPoints): the mounts of the
 * same filesystem with the same root, `path` itself excluded.
 */
export function mountRefs(mounts: readonly MountInfo[], path: string): string[] {
  let base: MountInfo | undefined;
  for (const m of mounts) {
    const inside = path === m.mountPoint || path.startsWith(m.mountPoint === '/' ? '/' : `${m.mountPoint}/`);
    if (inside && (!base || m.mountPoint.length >= base.mountPoint.length)) base = m;
  }
  if (!base) return [];
  const root = join(base.root, relative(base.mountPoint, path));
  return mounts.filter((m) => m.device === base.device && m.root === root && m.mountPoint !== path).map((m) => m.mountPoint);
}

export const localVolumePlugin: VolumePlugin = {
  name: LOCAL_VOLUME_PLUGIN,
  requiresRemount: false,
  dirNamedByPV: true,
  canSupport: () => false,
  canSupportPersistent: (pv) => pv.spec?.local !== undefined,
  async setUp(pod, _v, host, persistent): Promise<MountedVolume> {
    if (!persistent) throw new VolumeError('a local volume must come from a PersistentVolume');
    const pvName = persistent.pv.metadata?.name ?? '';
    const readOnly = persistent.readOnly;
    const dir = volumeDir(podDir(host.rootDir, pod.metadata.uid ?? ''), LOCAL_VOLUME_PLUGIN, pvName);
    const globalPath = persistent.pv.spec?.local?.path ?? '';
    if (globalPath === '') throw new VolumeError(`LocalVolume volume "${pvName}" path is empty`);
    if (hasBacksteps(globalPath)) throw new VolumeError(`invalid path: ${globalPath} must not contain '..'`);
    const mounts = await host.mounter.list();
    if (isMountPoint(mounts, dir)) return { path: dir, readOnly };

    const st = await stat(globalPath).catch((err: NodeJS.ErrnoException) => {
      throw new VolumeError(`local volume path ${globalPath} of PersistentVolume "${pvName}": ${err.code ?? err.message}`);
    });
    if (st.isBlockDevice()) {
      throw new VolumeError(
        `local volume path ${globalPath} of PersistentVolume "${pvName}" is a block device; kubelet-ts mounts only directories`,
      );
    }
    if (!st.isDirectory()) throw new VolumeError(`local volume path ${globalPath} of PersistentVolume "${pvName}" is not a directory`);

    const real = await realpath(globalPath);
    const podsPrefix = `${podsDir(host.rootDir)}/`;
    const otherPods = mountRefs(mounts, real).filter((r) => r.startsWith(podsPrefix));
    const { fsGroup } = fsGroupOf(pod);
    if (fsGroup !== undefined && fsGroup !== null && otherPods.length > 0 && st.gid !== fsGroup) {
      host.recorder?.record(
        podReference(pod),
        'Warning',
        'AlreadyMountedVolume',
        `The requested fsGroup is ${fsGroup}, but the volume ${pvName} has GID ${st.gid}. The volume may not be shareable.`,
      );
    }

    await makeDirectoryAsync(dir, 'the local volume mount point', 0o750);
    const options = ['bind', ...(readOnly ? ['ro'] : []), ...(persistent.pv.spec?.mountOptions ?? [])];
    try {
      await host.mounter.mount(real, dir, 'none', options);
    } catch (err) {
      // Leave nothing half-made: unmount if the bind happened, then remove the mount point.
      if (isMountPoint(await host.mounter.list(), dir)) await host.mounter.unmount(dir).catch(() => undefined);
      await rmdir(dir).catch(() => undefined);
      throw err;
    }
    if (!readOnly && otherPods.length === 0) await setVolumeOwnership(dir, pod, false);
    return { path: dir, readOnly };
  },
  async tearDown(uid, dirName, host) {
    const dir = volumeDir(podDir(host.rootDir, uid), LOCAL_VOLUME_PLUGIN, dirName);
    try {
      await lstat(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (isMountPoint(await host.mounter.list(), dir)) await host.mounter.unmount(dir);
    if (isMountPoint(await host.mounter.list(), dir)) throw new VolumeError(`${dir} is still mounted after unmounting it`);
    await rmdir(dir);
  },
};
