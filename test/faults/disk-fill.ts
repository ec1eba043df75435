/**
 * The node's directories on small file systems of their own, filled and
 * freed on demand: each directory (root, pod logs, container logs) gets a
 * tmpfs (mounted over it before the agent starts, unmounted by unmountAll);
 * fill() writes one file until the blocks run out, then empty files until
 * the inodes do, so every write, create and mkdir below it fails with ENOSPC;
 * free() removes them. readOnly() remounts a directory read-only (EROFS), as
 * root is not stopped by file modes.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const FILL = '.kts-fault-fill';
const CHUNK = Buffer.alloc(1 << 20);

const isMountPoint = (dir: string) =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === dir);

export function mountTmpfs(dir: string, bytes: number, inodes: number): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},nr_inodes=${inodes},mode=0755`, 'tmpfs', dir]);
}

/** Unmounts each directory that is a mount point (lazily: the agent may still hold files open). */
export function unmountAll(dirs: readonly string[]): void {
  for (const d of dirs) if (isMountPoint(d)) execFileSync('umount', ['-l', d]);
}

/** Fills `dir`'s file system: blocks first, then inodes. Returns the files made. */
export function fill(dir: string): number {
  const top = join(dir, FILL);
  mkdirSync(top, { recursive: true });
  const fd = openSync(join(top, 'blocks'), 'w');
  try {
    for (;;) writeSync(fd, CHUNK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  let n = 0;
  try {
    for (; ; n++) writeFileSync(join(top, String(n)), '');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  return n + 1;
}

export function free(dir: string): void {
  rmSync(join(dir, FILL), { recursive: true, force: true });
}

export function remount(dir: string, mode: 'ro' | 'rw'): void {
  execFileSync('mount', ['-o', `remount,${mode}`, dir]);
}
