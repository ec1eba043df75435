/**
 * The volumes upstream "wraps" in an emptyDir (NewWrapperMounter): configMap
 * (on disk), secret, downwardAPI and projected (on a tmpfs). Their files are
 * written with the atomic writer into the wrapping plugin's volume directory;
 * the emptyDir's ready file sits under the emptyDir plugin's metadata as
 * `wrapped_<name>`. The container sees them read-only.
 */
import type { Volume } from '../../api/core-v1.js';
import type { Pod } from '../../api/pod.js';
import { VolumeError } from '../../common/errors.js';
import { pluginMetaDir, podDir, volumeDir } from '../../pod/pod-dirs.js';
import { AtomicWriter, type Payload } from './atomic-writer.js';
import { EMPTY_DIR_PLUGIN, memoryVolumeSizeBytes, setUpEmptyDir, tearDownEmptyDir, type StorageMedium } from './empty-dir-plugin.js';
import type { MountedVolume, VolumeHost } from './volume-plugin.js';
import { setVolumeOwnership } from './volume-ownership.js';

/** The core/v1 default of defaultMode for configMap, secret, downwardAPI and projected volumes (0644). */
export const DEFAULT_VOLUME_MODE = 0o644;

/** Fails with every collected problem at once (upstream utilerrors.NewAggregate: "[a, b]" for several). */
export function throwIfErrors(errors: readonly string[]): void {
  if (errors.length > 0) throw new VolumeError(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
}

export function wrappedDirs(host: VolumeHost, uid: string, plugin: string, name: string): { dir: string; metaDir: string } {
  const pd = podDir(host.rootDir, uid);
  return { dir: volumeDir(pd, plugin, name), metaDir: pluginMetaDir(pd, EMPTY_DIR_PLUGIN, `wrapped_${name}`) };
}

/** Sets up the wrapped directory for `plugin` and writes `payload` into it atomically. */
export async function setUpWrappedVolume(
  pod: Pod,
  v: Volume,
  host: VolumeHost,
  plugin: string,
  medium: StorageMedium,
  payload: Payload,
): Promise<MountedVolume> {
  const { dir, metaDir } = wrappedDirs(host, pod.metadata.uid ?? '', plugin, v.name);
  const size = medium === 'Memory' ? memoryVolumeSizeBytes(host.nodeAllocatable.memory, pod, undefined) : undefined;
  await setUpEmptyDir(host, dir, metaDir, medium, size);
  await new AtomicWriter(dir, host.clock).write(payload);
  await setVolumeOwnership(dir, pod, true);
  return { path: dir, readOnly: true };
}

/** Tears down a wrapped directory of `plugin`. */
export function tearDownWrappedVolume(uid: string, name: string, host: VolumeHost, plugin: string): Promise<void> {
  const { dir, metaDir } = wrappedDirs(host, uid, plugin, name);
  return tearDownEmptyDir(host, dir, metaDir);
}
