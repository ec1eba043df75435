/**
 * mkdir -p with errors that say what failed, where and why.
 *
 * Node's recursive mkdir names the path asked for, not the component that
 * failed, and sometimes the wrong errno: with two or more levels missing on a
 * read-only file system (both APIs) or a full one (the promise API) it fails
 * with ENOENT. After a failure, the missing components are made again one at
 * a time, top down, with plain mkdir(2)s, which fail with the component and
 * errno that really failed: that is the FileSystemError thrown. Only a failed
 * call pays for it (a few synchronous system calls); should the retry make
 * the directory (the cause went away), the call succeeds.
 */
import * as nodeFs from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { getSystemErrorMap } from 'node:util';
import { FileSystemError } from './errors.js';

/** The calls used for the diagnosis (a fake in tests). */
export interface DirFs {
  mkdirSync(path: string, options: { recursive?: boolean; mode?: number }): unknown;
  statSync(path: string): { isDirectory(): boolean };
}

/**
 * mkdir -p of `path` (`mode` for what it creates); a FileSystemError naming
 * `what` ("the pod log directory"), the path and the cause otherwise.
 */
export function makeDirectory(path: string, what: string, mode?: number, fs: DirFs = nodeFs): void {
  try {
    fs.mkdirSync(path, { recursive: true, mode });
  } catch (err) {
    const failure = mkdirFailure(path, what, err, mode, fs);
    if (failure) throw failure;
  }
}

/** makeDirectory with the promise API for the first attempt. */
export async function makeDirectoryAsync(path: string, what: string, mode?: number): Promise<void> {
  try {
    await mkdir(path, { recursive: true, mode });
  } catch (err) {
    const failure = mkdirFailure(path, what, err, mode, nodeFs);
    if (failure) throw failure;
  }
}

/** The error for a failed mkdir -p of `path`, from a retry one component at a time; undefined when the retry made it. */
function mkdirFailure(path: string, what: string, err: unknown, mode: number | undefined, fs: DirFs): FileSystemError | undefined {
  const failed = retryComponents(path, mode, fs);
  if (!failed) return undefined;
  const e = failed.err.code ? failed.err : (err as NodeJS.ErrnoException);
  const errno = e.code ?? 'EUNKNOWN';
  const reason = systemReason(e);
  const where = failed.at === path ? '' : `${e.syscall ?? 'mkdir'} ${failed.at}: `;
  return new FileSystemError(`cannot create ${what} ${path}: ${where}${reason} (${errno})`, path, errno, { cause: e });
}

/** The system's words for an errno error ("no space left on device"), else its message. */
export function systemReason(e: NodeJS.ErrnoException): string {
  return (e.errno !== undefined ? getSystemErrorMap().get(e.errno)?.[1] : undefined) ?? e.message;
}

function retryComponents(path: string, mode: number | undefined, fs: DirFs): { at: string; err: NodeJS.ErrnoException } | undefined {
  const missing: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    let isDir: boolean;
    try {
      isDir = fs.statSync(p).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { at: p, err: err as NodeJS.ErrnoException };
      missing.unshift(p);
      if (dirname(p) === p) break;
      continue;
    }
    // The path itself a file: its mkdir says EEXIST. An ancestor: its child's says ENOTDIR.
    if (!isDir && p === path) missing.unshift(p);
    break;
  }
  for (const p of missing) {
    try {
      fs.mkdirSync(p, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && isDirectory(p, fs)) continue;
      return { at: p, err: err as NodeJS.ErrnoException };
    }
  }
  return undefined;
}

function isDirectory(path: string, fs: DirFs): boolean {
  try {
    return fs.statSync(path).isDirectory();
  } catch {
    return false;
  }
}
