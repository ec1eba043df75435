/**
 * writeFileSync with an error that says what failed, where and why. Node's
 * error for a write(2) that fails after the open, such as a full disk, names
 * neither the file nor what it was for ("ENOSPC: no space left on device,
 * write"); this one does: "cannot write the pod's hosts file <path>: no space
 * left on device (ENOSPC)".
 */
import * as nodeFs from 'node:fs';
import { FileSystemError } from './errors.js';
import { systemReason } from './make-dir.js';

export type WriteFs = Pick<typeof nodeFs, 'writeFileSync'>;

/** writeFileSync of `data` to `path` ("the pod's hosts file" for `what`); a FileSystemError otherwise. */
export function writeFileNamed(path: string, what: string, data: string, options: nodeFs.WriteFileOptions, fs: WriteFs = nodeFs): void {
  try {
    fs.writeFileSync(path, data, options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const errno = e.code ?? 'EUNKNOWN';
    throw new FileSystemError(`cannot write ${what} ${path}: ${systemReason(e)} (${errno})`, path, errno, { cause: e });
  }
}
