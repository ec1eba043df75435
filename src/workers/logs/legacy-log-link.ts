/**
 * The `/var/log/containers/<pod>_<namespace>_<container>-<containerID>.log`
 * symlinks to the CRI log files (upstream kuberuntime legacy log symlinks,
 * which log shippers such as fluent-bit and promtail read):
 * - made when a container starts (startContainer);
 * - removed with the container (removeContainer);
 * - a dangling link whose container the runtime no longer has is removed by
 *   container garbage collection.
 * The directory is KubeletConfig containerLogsDir ('' = no links).
 */
import { lstatSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectory } from '../../common/make-dir.js';

/** ext4's file name limit, as upstream truncates the name. */
const MAX_NAME = 255;
const SUFFIX = '.log';

/** Upstream logSymlink: `<pod>_<ns>_<container>-<id>.log`, the stem cut to fit 255 bytes. */
export function legacyLogLinkPath(dir: string, podName: string, namespace: string, containerName: string, containerId: string): string {
  let stem = `${podName}_${namespace}_${containerName}-${containerId}`;
  if (stem.length > MAX_NAME - SUFFIX.length) stem = stem.slice(0, MAX_NAME - SUFFIX.length);
  return join(dir, stem + SUFFIX);
}

/** The container ID of a link name (upstream getContainerIDFromLegacyLogSymlink), or undefined. */
export function containerIdOfLink(name: string): string | undefined {
  if (!name.endsWith(SUFFIX)) return undefined;
  const stem = name.slice(0, -SUFFIX.length);
  const dash = stem.lastIndexOf('-');
  return dash < 0 || dash === stem.length - 1 ? undefined : stem.slice(dash + 1);
}

/**
 * Points the link at `target`, replacing an earlier one of the same name.
 * One symlink(2) when the directory exists and the name is free (every
 * container start); the directory is made, or the old link removed, only
 * when that call says so.
 */
export function linkContainerLog(link: string, target: string, dir: string): void {
  try {
    symlinkSync(target, link);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') makeDirectory(dir, 'the container log directory (containerLogsDir)');
    else if (code === 'EEXIST') rmSync(link, { force: true });
    else throw err;
  }
  symlinkSync(target, link);
}

/** Removes the link (missing is fine). */
export function unlinkContainerLog(link: string): void {
  rmSync(link, { force: true });
}

/** Links in `dir` whose target is gone, with their container IDs. */
export function danglingLinks(dir: string): { path: string; containerId: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: { path: string; containerId: string }[] = [];
  for (const name of names) {
    const id = containerIdOfLink(name);
    const path = join(dir, name);
    if (!id) continue;
    try {
      if (!lstatSync(path).isSymbolicLink()) continue;
      statSync(path);
    } catch {
      out.push({ path, containerId: id });
    }
  }
  return out;
}
