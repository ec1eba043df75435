import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSystemError } from '../../src/common/errors.js';
import { writeFileNamed, type WriteFs } from '../../src/common/write-file.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('writeFileNamed', () => {
  it('writes the file', () => {
    const d = mkdtempSync(join(tmpdir(), 'wfn-'));
    dirs.push(d);
    writeFileNamed(join(d, 'f'), 'a file', 'data', { mode: 0o644 });
    expect(readFileSync(join(d, 'f'), 'utf8')).toBe('data');
  });

  it('names the file, what it is for, the reason and the errno when a write fails after the open (a full disk)', () => {
    // What Node throws for a write(2) failing with ENOSPC: no path in it.
    const fs: WriteFs = {
      writeFileSync: () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      },
    };
    let caught: unknown;
    try {
      writeFileNamed('/var/lib/kubelet/pods/u/etc-hosts', "the pod's hosts file", 'x', {}, fs);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(FileSystemError);
    expect((caught as FileSystemError).message).toBe(
      "cannot write the pod's hosts file /var/lib/kubelet/pods/u/etc-hosts: no space left on device (ENOSPC)",
    );
    expect((caught as FileSystemError).errno).toBe('ENOSPC');
  });

  it('a missing directory is ENOENT with the path', () => {
    expect(() => writeFileNamed('/nonexistent-dir-kts/f', 'a file', 'x', {})).toThrow(
      'cannot write a file /nonexistent-dir-kts/f: no such file or directory (ENOENT)',
    );
  });
});
