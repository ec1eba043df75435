/**
 * The directories the agent writes before anything else starts: rootDir,
 * podLogsDir and containerLogsDir (defaults /var/lib/kubelet, /var/log/pods,
 * /var/log/containers, as upstream). Each is made if missing and must be
 * writable; a failure is a FileSystemError naming the directory, the cause
 * and, when permission was the cause, the two ways out: run as root, or point
 * the setting at a directory this user can write.
 */
import * as nodeFs from 'node:fs';
import { getSystemErrorMap } from 'node:util';
import { FileSystemError } from '../../common/errors.js';
import { makeDirectory, type DirFs } from '../../common/make-dir.js';

export interface StateDir {
  path: string;
  /** "the root directory (rootDir)" */
  what: string;
  /** The flag that sets it, for the hint. */
  flag: string;
}

const DENIED = new Set(['EACCES', 'EPERM', 'EROFS']);

function hinted(err: FileSystemError, dir: StateDir): FileSystemError {
  if (!DENIED.has(err.errno)) return err;
  const way = err.errno === 'EROFS' ? 'a writable directory' : 'a directory this user can write';
  return new FileSystemError(`${err.message}; run kubelet-ts as root, or set ${dir.flag} to ${way}`, err.path, err.errno, {
    cause: err.cause,
  });
}

/** The calls used (a fake in tests). */
export type StateDirFs = DirFs & { accessSync(path: string, mode: number): void };

/** Makes each directory (mkdir -p) and checks that this process can write it. */
export function prepareStateDirs(dirs: readonly StateDir[], fs: StateDirFs = nodeFs): void {
  for (const dir of dirs) {
    try {
      makeDirectory(dir.path, dir.what, undefined, fs);
      fs.accessSync(dir.path, nodeFs.constants.W_OK | nodeFs.constants.X_OK);
    } catch (err) {
      if (err instanceof FileSystemError) throw hinted(err, dir);
      const e = err as NodeJS.ErrnoException;
      const errno = e.code ?? 'EUNKNOWN';
      const reason = (e.errno !== undefined ? getSystemErrorMap().get(e.errno)?.[1] : undefined) ?? e.message;
      throw hinted(new FileSystemError(`cannot write ${dir.what} ${dir.path}: ${reason} (${errno})`, dir.path, errno, { cause: e }), dir);
    }
  }
}
