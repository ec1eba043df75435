import { describe, expect, it } from 'vitest';
import { FileSystemError } from '../../src/common/errors.js';
import { prepareStateDirs, type StateDirFs } from '../../src/main/startup/state-dirs.js';

const errno = (code: string, syscall: string, path: string, n: number) =>
  Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path, errno: n });

/** A file system where `/` and `/var/lib` exist, owned by someone else: mkdir below them and writes to them are refused. */
function fs(existing: string[], writable: string[] = []): StateDirFs {
  return {
    statSync: (p) => {
      if (!existing.includes(p)) throw errno('ENOENT', 'stat', p, -2);
      return { isDirectory: () => true };
    },
    mkdirSync: (p) => {
      if (existing.includes(p)) return undefined;
      throw errno('EACCES', 'mkdir', p, -13);
    },
    accessSync: (p) => {
      if (!writable.includes(p)) throw errno('EACCES', 'access', p, -13);
    },
  };
}

const root = { path: '/var/lib/kubelet', what: 'the root directory (rootDir)', flag: '--root-dir' };

describe('prepareStateDirs: a permission problem says how to get past it', () => {
  it('a root directory that cannot be made: run as root or set --root-dir', () => {
    expect(() => prepareStateDirs([root], fs(['/', '/var', '/var/lib']))).toThrow(
      'cannot create the root directory (rootDir) /var/lib/kubelet: permission denied (EACCES); run kubelet-ts as root, or set --root-dir to a directory this user can write',
    );
  });

  it('one that exists but is not writable (made by root earlier) fails up front, not at its first file', () => {
    let err: unknown;
    try {
      prepareStateDirs([root], fs(['/', '/var', '/var/lib', '/var/lib/kubelet']));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FileSystemError);
    expect((err as FileSystemError).errno).toBe('EACCES');
    expect((err as Error).message).toBe(
      'cannot write the root directory (rootDir) /var/lib/kubelet: permission denied (EACCES); run kubelet-ts as root, or set --root-dir to a directory this user can write',
    );
  });

  it('the pod log directory names its own flag; writable directories pass', () => {
    const logs = { path: '/var/log/pods', what: 'the pod log directory (podLogsDir)', flag: '--pod-logs-dir' };
    const f = fs(['/', '/var', '/var/lib', '/var/lib/kubelet', '/var/log'], ['/var/lib/kubelet']);
    expect(() => prepareStateDirs([root, logs], f)).toThrow(
      /; run kubelet-ts as root, or set --pod-logs-dir to a directory this user can write$/,
    );
    expect(() => prepareStateDirs([root], f)).not.toThrow();
  });
});
