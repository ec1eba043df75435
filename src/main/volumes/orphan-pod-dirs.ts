/**
 * Housekeeping of pod directories (upstream cleanupOrphanedPodDirs): the
 * directory of a pod that is neither desired nor running is removed once
 * none of its volumes is set up, left on disk or bound by a subPath. The
 * removal never crosses a mount point, so a volume still mounted is never
 * emptied through its mount.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { v } from '../../common/logger.js';
import { removeAllUnmounted, type Mounter } from '../../common/mounter.js';
import { podDir, podsDir, podVolumesDir, podVolumeSubpathsDir } from '../../pod/pod-dirs.js';
import { errorMessage } from '../../common/error-message.js';

export interface OrphanCleanupDeps {
  rootDir: string;
  mounter: Mounter;
  logger: Logger;
  /** The pod is desired, being terminated, or still has containers in the runtime. */
  isActive(uid: string): boolean;
  /** The volume manager still holds volumes of the pod. */
  hasVolumes(uid: string): boolean;
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Volume directories still on disk (upstream getPodVolumePathListFromDisk). */
async function volumePathsOnDisk(pd: string): Promise<string[]> {
  const out: string[] = [];
  const volumes = podVolumesDir(pd);
  for (const plugin of await entries(volumes)) {
    for (const name of await entries(join(volumes, plugin))) out.push(join(volumes, plugin, name));
  }
  return out;
}

/** Removes orphaned pod directories; returns the UIDs removed. Problems are logged, never thrown. */
export async function cleanupOrphanedPodDirs(d: OrphanCleanupDeps): Promise<string[]> {
  const removed: string[] = [];
  const problems: string[] = [];
  for (const uid of await entries(podsDir(d.rootDir))) {
    if (d.isActive(uid)) continue;
    if (d.hasVolumes(uid)) {
      v(d.logger, 3).info({ podUID: uid }, 'Orphaned pod found, but volumes are not cleaned up');
      continue;
    }
    const pd = podDir(d.rootDir, uid);
    try {
      const paths = await volumePathsOnDisk(pd);
      if (paths.length > 0) {
        problems.push(`orphaned pod ${JSON.stringify(uid)} found, but volume paths are still present on disk: ${paths.join(', ')}`);
        continue;
      }
      if ((await entries(podVolumeSubpathsDir(pd))).length > 0) {
        problems.push(`orphaned pod ${JSON.stringify(uid)} found, but volume subpaths are still present on disk`);
        continue;
      }
      v(d.logger, 3).info({ podUID: uid }, 'Orphaned pod found, removing');
      await removeAllUnmounted(d.mounter, pd);
      removed.push(uid);
    } catch (err) {
      problems.push(`failed to remove orphaned pod ${JSON.stringify(uid)} dir: ${errorMessage(err)}`);
    }
  }
  if (problems.length > 0) {
    d.logger.error({ total: problems.length }, `${problems[0]} : There were a total of ${problems.length} errors similar to this.`);
  }
  return removed;
}
