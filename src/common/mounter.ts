/**
 * Mounting, as the kubelet needs it (upstream k8s.io/mount-utils): tmpfs for
 * memory-backed volumes, bind mounts for subPaths and the root dir's shared
 * propagation, unmounting, and the mount table (/proc/self/mountinfo).
 *
 * `LinuxMounter` runs the util-linux `mount`/`umount` binaries (as child
 * processes, or through the mount helper on the main thread) and reads
 * mountinfo asynchronously. The agent must run as root in the mount namespace the
 * container runtime uses, so that the runtime sees these mounts.
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { MountError } from './errors.js';
import type { CommandRunner } from './mount-helper.js';

/** One line of /proc/self/mountinfo. */
export interface MountInfo {
  id: number;
  parentId: number;
  /** "major:minor" of the filesystem. */
  device: string;
  /** The root of the mount within its filesystem (the bind source, for a bind mount). */
  root: string;
  mountPoint: string;
  options: string[];
  /** Optional fields, e.g. "shared:1", "master:2". */
  optional: string[];
  fsType: string;
  source: string;
  superOptions: string[];
}

export interface Mounter {
  /** `mount -t fsType -o options source target`. */
  mount(source: string, target: string, fsType: string, options?: string[]): Promise<void>;
  /** A bind mount of `source` (a path or /proc/<pid>/fd/<n>) onto `target`, without canonicalizing the source. */
  bindMount(source: string, target: string): Promise<void>;
  /** `mount --make-rshared target`. */
  makeRShared(target: string): Promise<void>;
  unmount(target: string): Promise<void>;
  /** The current mount table. */
  list(): Promise<MountInfo[]>;
}

/** Decodes the octal escapes (\040 space, \011 tab, \012 newline, \134 backslash) mountinfo uses. */
export function unescapeMountField(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

/** Parses /proc/self/mountinfo text; malformed lines are skipped. */
export function parseMountInfo(text: string): MountInfo[] {
  const out: MountInfo[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const f = line.split(' ');
    const sep = f.indexOf('-', 6);
    if (f.length < 10 || sep < 0 || f.length < sep + 3) continue;
    out.push({
      id: Number(f[0]),
      parentId: Number(f[1]),
      device: f[2],
      root: unescapeMountField(f[3]),
      mountPoint: unescapeMountField(f[4]),
      options: f[5].split(','),
      optional: f.slice(6, sep),
      fsType: f[sep + 1],
      source: unescapeMountField(f[sep + 2]),
      superOptions: (f[sep + 3] ?? '').split(','),
    });
  }
  return out;
}

/** True when `path` is a mount point in `mounts`. */
export function isMountPoint(mounts: readonly MountInfo[], path: string): boolean {
  return mounts.some((m) => m.mountPoint === path);
}

/** The mounts at or below `dir` (deepest first, the order to unmount them in). */
export function mountsUnder(mounts: readonly MountInfo[], dir: string): MountInfo[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return mounts
    .filter((m) => m.mountPoint === dir || m.mountPoint.startsWith(prefix))
    .sort((a, b) => b.mountPoint.length - a.mountPoint.length);
}

/** Runs `mount`/`umount` as a child process of this process (fine in workers; see mount-helper.ts for the main thread). */
export const execCommand: CommandRunner = (cmd, args) =>
  new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 60_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const detail = (stderr || err.message).trim();
      reject(new MountError(`${cmd} failed: ${detail} (command: ${cmd} ${args.join(' ')})`, { cause: err }));
    });
  });

export class LinuxMounter implements Mounter {
  constructor(
    private readonly run: CommandRunner = execCommand,
    private readonly mountinfoPath = '/proc/self/mountinfo',
  ) {}

  mount(source: string, target: string, fsType: string, options: string[] = []): Promise<void> {
    const args = ['-t', fsType];
    if (options.length > 0) args.push('-o', options.join(','));
    return this.run('mount', [...args, source, target]);
  }

  bindMount(source: string, target: string): Promise<void> {
    return this.run('mount', ['--no-canonicalize', '--bind', source, target]);
  }

  makeRShared(target: string): Promise<void> {
    return this.run('mount', ['--make-rshared', target]);
  }

  unmount(target: string): Promise<void> {
    return this.run('umount', [target]);
  }

  async list(): Promise<MountInfo[]> {
    return parseMountInfo(await readFile(this.mountinfoPath, 'utf8'));
  }
}

/**
 * Removes `path` recursively, but only when nothing is mounted at or below it
 * (upstream removeall.RemoveAllOneFilesystem refuses to cross a mount point):
 * a volume still mounted is never deleted through its mount.
 */
export async function removeAllUnmounted(mounter: Mounter, path: string): Promise<void> {
  const mounted = mountsUnder(await mounter.list(), path);
  if (mounted.length > 0) {
    throw new MountError(`cannot remove ${path}: ${mounted.map((m) => m.mountPoint).join(', ')} still mounted`);
  }
  await rm(path, { recursive: true, force: true });
}

/**
 * Makes `path` a shared mount (upstream mount.MakeRShared): bind-mounts it
 * onto itself when it is not a mount point, then marks it rshared. A mount
 * already shared is left alone. A bind over a directory with mounts below it
 * would hide them, so that case is refused.
 */
export async function makeRShared(mounter: Mounter, path: string): Promise<void> {
  const mounts = await mounter.list();
  const mount = mounts.find((m) => m.mountPoint === path);
  if (mount?.optional.some((o) => o.startsWith('shared:'))) return;
  if (!mount) {
    const below = mountsUnder(mounts, path);
    if (below.length > 0) {
      throw new MountError(
        `${path} is not a mount point and ${below.length} mounts are below it (e.g. ${below[0].mountPoint}); binding it onto itself would hide them. ` +
          `Make it shared before kubelet-ts starts: mount --bind ${path} ${path} && mount --make-rshared ${path}`,
      );
    }
    await mounter.bindMount(path, path);
  }
  await mounter.makeRShared(path);
}
