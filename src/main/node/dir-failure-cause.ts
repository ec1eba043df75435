/**
 * Whether an error is a failure of one of the node's own directories (the
 * root directory, the pod and container log directories): a full disk, a
 * read-only or unwritable file system, an I/O error. Such a failure is the
 * node's, not the pod's: every pod that touches the directory fails the same
 * way, so it is reported once per cause (CauseLog), not once per pod.
 *
 * Errors cross the worker boundary as text, so the error's message and its
 * causes' are searched for an errno code and a path below one of the
 * directories.
 */
import { errorMessage } from '../../common/error-message.js';

export interface NodeDir {
  path: string;
  /** "the root directory" */
  what: string;
}

const ERRNOS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'input/output error',
};
const ERRNO_RE = new RegExp(`\\b(${Object.keys(ERRNOS).join('|')})\\b`);

/** The error's message followed by its causes' (an Error's `cause` chain, at most 8 deep). */
function fullText(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 8 && e !== undefined && e !== null; i++) {
    parts.push(errorMessage(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(': ');
}

/** Makes the classifier for the node's directories (longest path first, so a nested one wins). */
export function dirFailureCause(dirs: readonly NodeDir[]): (err: unknown) => string | undefined {
  const sorted = [...dirs].filter((d) => d.path !== '').sort((a, b) => b.path.length - a.path.length);
  return (err) => {
    const text = fullText(err);
    const errno = ERRNO_RE.exec(text)?.[1];
    if (!errno) return undefined;
    const dir = sorted.find((d) => text.includes(`${d.path.replace(/\/+$/, '')}/`) || text.includes(`'${d.path}'`));
    if (!dir) return undefined;
    return `${ERRNOS[errno]} (${errno}) in ${dir.what} ${dir.path}`;
  };
}
