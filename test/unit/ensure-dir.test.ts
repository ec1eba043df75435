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

  it.each([false, true])('fails as mkdir -p does where a file is in the way (likelyExists %s)', (likely) => {
    writeFileSync(join(dir, `f-${likely}`), '');
    expect(() => ensureDir(join(dir, `f-${likely}`), 0o750, likely)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    expect(() => ensureDir(join(dir, `f-${likely}`, 'sub'), 0o750, likely)).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
