import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDir } from '../../src/main/volumes/volume-state.js';

describe('ensureDir', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-ensure-dir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([false, true])('makes missing parents with the mode and keeps an existing directory (likelyExists %s)', (likely) => {
    const path = join(dir, `a-${likely}`, 'b', 'c');
    ensureDir(path, 0o750, likely);
    expect(statSync(path).mode & 0o777).toBe(0o750 & ~process.umask());
    mkdirSync(join(dir, `x-${likely}`), { mode: 0o700 });
    ensureDir(join(dir, `x-${likely}`), 0o750, likely);
    expect(statSync(join(dir, `x-${likely}`)).mode & 0o777).toBe(0o700);
  });

  it.each([false, true])('fails as mkdir -p does where a file is in the way, saying what and where (likelyExists %s)', (likely) => {
    const file = join(dir, `f-${likely}`);
    writeFileSync(file, '');
    expect(() => ensureDir(file, 0o750, likely, 'the pod volumes directory')).toThrow(
      expect.objectContaining({
        code: 'KTS_ERR_FS',
        errno: 'EEXIST',
        message: `cannot create the pod volumes directory ${file}: file already exists (EEXIST)`,
      }),
    );
    expect(() => ensureDir(join(file, 'sub'), 0o750, likely)).toThrow(
      expect.objectContaining({ errno: 'ENOTDIR', message: `cannot create directory ${join(file, 'sub')}: not a directory (ENOTDIR)` }),
    );
  });
});
