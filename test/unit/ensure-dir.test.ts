import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDir } from '../../src/main/volumes/volume-state.js';

describe('ensureDir', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-ensure-dir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([false, true])('makes missing parents with the mode and keeps an existing directory (likelyExists %s)', async (likely) => {
    const path = join(dir, `a-${likely}`, 'b', 'c');
    await ensureDir(path, 0o750, likely);
    expect(statSync(path).mode & 0o777).toBe(0o750 & ~process.umask());
    mkdirSync(join(dir, `x-${likely}`), { mode: 0o700 });
    await ensureDir(join(dir, `x-${likely}`), 0o750, likely);
    expect(statSync(join(dir, `x-${likely}`)).mode & 0o777).toBe(0o700);
  });

  it.each([false, true])('fails as mkdir -p does where a file is in the way (likelyExists %s)', async (likely) => {
    writeFileSync(join(dir, `f-${likely}`), '');
    await expect(ensureDir(join(dir, `f-${likely}`), 0o750, likely)).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(ensureDir(join(dir, `f-${likely}`, 'sub'), 0o750, likely)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
