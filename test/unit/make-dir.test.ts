import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getSystemErrorMap } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemError } from '../../src/common/errors.js';
import { makeDirectory, makeDirectoryAsync, type DirFs } from '../../src/common/make-dir.js';

/** An error as Node's fs raises it. */
function sysErr(code: keyof typeof constants.errno, syscall: string, path: string): NodeJS.ErrnoException {
  const errno = -constants.errno[code];
  return Object.assign(new Error(`${code}: ${getSystemErrorMap().get(errno)![1]}, ${syscall} '${path}'`), { errno, code, syscall, path });
}

/**
 * A file system of directories; a recursive mkdir fails with `recursive` (ENOENT: Node's report on a read-only
 * or full file system), a plain one with what `fail` says for the path.
 */
class FakeFs implements DirFs {
  readonly dirs = new Set(['/', '/var', '/var/lib', '/var/log']);
  constructor(
    private readonly recursive: keyof typeof constants.errno,
    private readonly fail: (path: string) => keyof typeof constants.errno | undefined,
  ) {}
  mkdirSync(path: string, options: { recursive?: boolean }): undefined {
    if (options.recursive) throw sysErr(this.recursive, 'mkdir', path);
    if (this.dirs.has(path)) throw sysErr('EEXIST', 'mkdir', path);
    if (!this.dirs.has(dirname(path))) throw sysErr('ENOENT', 'mkdir', path);
    const code = this.fail(path);
    if (code) throw sysErr(code, 'mkdir', path);
    this.dirs.add(path);
    return undefined;
  }
  statSync(path: string) {
    if (!this.dirs.has(path)) throw sysErr('ENOENT', 'stat', path);
    return { isDirectory: () => true };
  }
}

const thrown = (fn: () => void): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('makeDirectory: what failed, where and why', () => {
  it('a read-only file system Node reports as ENOENT is EROFS, with the component that failed and the cause', () => {
    const path = '/var/log/pods/ns_web_u1';
    const err = thrown(() => makeDirectory(path, 'the pod log directory', 0o755, new FakeFs('ENOENT', () => 'EROFS')));
    expect(err).toBeInstanceOf(FileSystemError);
    expect(err).toMatchObject({
      code: 'KTS_ERR_FS',
      path,
      errno: 'EROFS',
      message: `cannot create the pod log directory ${path}: mkdir /var/log/pods: read-only file system (EROFS)`,
    });
    expect((err as Error).cause).toMatchObject({ code: 'EROFS', syscall: 'mkdir', path: '/var/log/pods' });
  });

  it('ENOSPC making a new pod directory names the directory that could not be made', () => {
    const fs = new FakeFs('ENOSPC', (p) => (p === '/var/lib/kubelet/pods/u1' ? 'ENOSPC' : undefined));
    const path = '/var/lib/kubelet/pods/u1/volumes';
    expect(thrown(() => makeDirectory(path, 'the pod volumes directory', 0o750, fs))).toMatchObject({
      errno: 'ENOSPC',
      message: `cannot create the pod volumes directory ${path}: mkdir /var/lib/kubelet/pods/u1: no space left on device (ENOSPC)`,
    });
    expect(fs.dirs.has('/var/lib/kubelet/pods')).toBe(true);
  });

  it('a failure at the path itself is not repeated', () => {
    expect(
      thrown(() => makeDirectory('/var/log/x', 'the container log directory', undefined, new FakeFs('EACCES', () => 'EACCES'))),
    ).toMatchObject({
      message: 'cannot create the container log directory /var/log/x: permission denied (EACCES)',
    });
  });

  it('succeeds when the one-by-one retry makes the directory (the cause went away)', () => {
    const fs = new FakeFs('ENOSPC', () => undefined);
    makeDirectory('/var/lib/a/b', 'a directory', 0o700, fs);
    expect(fs.dirs.has('/var/lib/a/b')).toBe(true);
  });

  describe('on a real file system', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-make-dir-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'file');
    writeFileSync(file, '');

    it('makes missing parents with the mode', async () => {
      makeDirectory(join(dir, 'a/b'), 'x', 0o750);
      await makeDirectoryAsync(join(dir, 'c/d'), 'x', 0o750);
      expect(statSync(join(dir, 'a/b')).mode & 0o777).toBe(0o750 & ~process.umask());
      expect(statSync(join(dir, 'c/d')).isDirectory()).toBe(true);
    });

    it('a file in the way: EEXIST at the path, ENOTDIR below it (both APIs)', async () => {
      expect(thrown(() => makeDirectory(file, 'the pod directory'))).toMatchObject({
        errno: 'EEXIST',
        message: `cannot create the pod directory ${file}: file already exists (EEXIST)`,
      });
      const below = join(file, 'a/b');
      const message = `cannot create the pod directory ${below}: mkdir ${join(file, 'a')}: not a directory (ENOTDIR)`;
      expect(thrown(() => makeDirectory(below, 'the pod directory'))).toMatchObject({ errno: 'ENOTDIR', message });
      await expect(makeDirectoryAsync(below, 'the pod directory')).rejects.toMatchObject({ errno: 'ENOTDIR', message });
    });
  });
});
