/**
 * Safe subPath mounts (upstream pkg/volume/util/subpath, subpath_linux.go).
 *
 * A container's `volumeMounts[i].subPath` is a path inside a volume that the
 * pod itself may have filled with symlinks. Handing the runtime the joined
 * path would let a symlink (`escape -> /`) bind any host path into the
 * container (CVE-2017-1002101). Instead the path is resolved and checked to
 * stay within the volume, opened component by component with O_NOFOLLOW
 * (each step relative to the previous descriptor, through /proc/self/fd, so a
 * symlink swapped in meanwhile is caught), and that descriptor is bind-mounted
 * to `pods/<uid>/volume-subpaths/<volume>/<container>/<index>`, which becomes
 * the container's mount source. The volume manager removes these binds
 * (cleanSubPaths) before it tears the volume down.
 *
 * Used by the sync tasks (prepare, in workers or inline) and by the volume
 * manager (clean, main thread).
 */
import { constants } from 'node:fs';
import { chmod, mkdir, open, readdir, realpath, rm, rmdir, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { SubpathError, VolumeError } from '../common/errors.js';
import { errorMessage } from '../common/error-message.js';
import { isMountPoint, type Mounter } from '../common/mounter.js';
import { podVolumeSubpathsDir, subpathMountPath } from './pod-dirs.js';

/** Linux O_PATH (not exported by node:fs): a descriptor that only names a file. */
const O_PATH = 0o10000000;
const OPEN_COMPONENT = O_PATH | constants.O_NOFOLLOW;

const isNotFound = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

function within(path: string, base: string): boolean {
  return path === base || path.startsWith(base.endsWith(sep) ? base : base + sep);
}

function fdPath(fd: FileHandle, component?: string): string {
  return `/proc/${process.pid}/fd/${fd.fd}${component === undefined ? '' : `/${component}`}`;
}

/** Opens `rel` below the directory `base` one component at a time, refusing any symlink. */
async function openNoFollow(base: string, rel: string): Promise<FileHandle> {
  let fd = await open(base, O_PATH | constants.O_DIRECTORY);
  try {
    for (const component of rel.split(sep).filter((c) => c !== '' && c !== '.')) {
      const next = await open(fdPath(fd, component), OPEN_COMPONENT);
      await fd.close();
      fd = next;
      if ((await fd.stat()).isSymbolicLink()) {
        throw new VolumeError(`symlink found at ${JSON.stringify(component)} while opening ${JSON.stringify(rel)} below ${base}`);
      }
    }
    return fd;
  } catch (err) {
    await fd.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Creates the directory `subPath` below `base` with mode `perm` (upstream
 * SafeMakeDir): the existing part must resolve within `base`, and each new
 * directory is created relative to its parent's descriptor.
 */
export async function safeMakeDir(subPath: string, base: string, perm: number): Promise<void> {
  const components = subPath.split(sep).filter((c) => c !== '' && c !== '.');
  let existing = 0;
  for (; existing < components.length; existing++) {
    try {
      await stat(join(base, ...components.slice(0, existing + 1)));
    } catch (err) {
      if (isNotFound(err)) break;
      throw err;
    }
  }
  const existingPath = await realpath(join(base, ...components.slice(0, existing)));
  if (!within(existingPath, base))
    throw new VolumeError(`path ${JSON.stringify(subPath)} resolves to ${existingPath}, outside the volume ${base}`);
  let fd = await openNoFollow(base, relative(base, existingPath));
  try {
    for (const component of components.slice(existing)) {
      await mkdir(fdPath(fd, component), { mode: perm });
      const next = await open(fdPath(fd, component), OPEN_COMPONENT | constants.O_DIRECTORY);
      await fd.close();
      fd = next;
      await chmod(fdPath(fd), perm);
    }
  } finally {
    await fd.close().catch(() => undefined);
  }
}

export interface SubpathRequest {
  /** The volume's host path (as the volume manager reported it). */
  volumePath: string;
  /** volumeMounts[index].subPath (already validated: relative, no `..`). */
  subPath: string;
  volumeName: string;
  podDir: string;
  containerName: string;
  index: number;
}

/**
 * Resolves, checks and bind-mounts a subPath; returns the bind target to use
 * as the container mount's host path. Creates the subPath directory first
 * when it does not exist. Reuses a bind left by an earlier start (or an
 * earlier agent process) when it still shows the same file. Fails with a
 * SubpathError whose message names only the volumeMount and the container
 * (upstream's "failed to create subPath directory for …" / "failed to prepare
 * subPath for …") and whose detail holds the host paths.
 */
export async function prepareSafeSubpath(mounter: Mounter, req: SubpathRequest): Promise<string> {
  const mount = `volumeMount ${JSON.stringify(req.volumeName)} of container ${JSON.stringify(req.containerName)}`;
  const fail = (what: string) => (err: unknown) => {
    throw new SubpathError(`failed to ${what} for ${mount}`, errorMessage(err), { cause: err });
  };
  const created = await createSubpathDir(req).catch(fail('create subPath directory'));
  return bindSubpath(mounter, req, created).catch(fail('prepare subPath'));
}

/** Upstream makeMounts' first step: a subPath that does not exist is created with the mode of its volume. */
async function createSubpathDir(req: SubpathRequest): Promise<string> {
  const base = await realpath(req.volumePath);
  const joined = join(base, req.subPath);
  const exists = await stat(joined).then(
    () => true,
    (err: unknown) => {
      if (isNotFound(err)) return false;
      throw err;
    },
  );
  if (!exists) await safeMakeDir(req.subPath, base, (await stat(base)).mode & 0o7777);
  return base;
}

/** Upstream PrepareSafeSubpath: resolve, check and bind-mount the subPath of the volume at `base`. */
async function bindSubpath(mounter: Mounter, req: SubpathRequest, base: string): Promise<string> {
  const joined = join(base, req.subPath);
  const resolved = await realpath(joined);
  if (!within(resolved, base)) throw new VolumeError(`subpath ${JSON.stringify(resolved)} not within volume path ${JSON.stringify(base)}`);

  const fd = await openNoFollow(base, relative(base, resolved));
  try {
    const source = await fd.stat();
    const target = subpathMountPath(req.podDir, req.volumeName, req.containerName, req.index);
    if (isMountPoint(await mounter.list(), target)) {
      const current = await stat(target);
      if (current.dev === source.dev && current.ino === source.ino) return target;
      await mounter.unmount(target);
    }
    await mkdir(dirname(target), { recursive: true, mode: 0o750 });
    if (source.isDirectory()) await mkdir(target, { recursive: true, mode: 0o750 });
    else await writeFile(target, '', { mode: 0o640, flag: 'a' });
    try {
      await mounter.bindMount(fdPath(fd), target);
    } catch (err) {
      await rm(target, { recursive: false, force: true }).catch(() => undefined);
      throw err;
    }
    return target;
  } finally {
    await fd.close();
  }
}

/**
 * Unmounts and removes every subPath bind of one volume of a pod (upstream
 * CleanSubPaths), before the volume itself is torn down.
 */
export async function cleanSubPaths(mounter: Mounter, podDirPath: string, volumeName: string): Promise<void> {
  const volumeSubpaths = join(podVolumeSubpathsDir(podDirPath), volumeName);
  let containers: string[];
  try {
    containers = await readdir(volumeSubpaths);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  const mounts = await mounter.list();
  for (const container of containers) {
    const dir = join(volumeSubpaths, container);
    for (const index of await readdir(dir)) {
      const p = join(dir, index);
      if (isMountPoint(mounts, p)) await mounter.unmount(p);
      // Never recursive: a bind still mounted must fail here, not be emptied.
      await rm(p, { force: true }).catch(async (err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === 'EISDIR' || (err as NodeJS.ErrnoException).code === 'ERR_FS_EISDIR') await rmdir(p);
        else throw err;
      });
    }
    await rmdir(dir);
  }
  await rmdir(volumeSubpaths);
  await rmdir(podVolumeSubpathsDir(podDirPath)).catch(() => undefined);
}
