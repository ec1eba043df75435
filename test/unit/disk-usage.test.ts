import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diskUsage } from '../../src/workers/stats/disk-usage.js';

describe('diskUsage (du -x -s -B 1)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-du-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sums allocated blocks and counts every entry, the directory itself included; a missing path reports nothing', async () => {
    mkdirSync(join(dir, 'vol/sub'), { recursive: true });
    writeFileSync(join(dir, 'vol/a'), Buffer.alloc(1024 * 1024, 1));
    writeFileSync(join(dir, 'vol/sub/b'), Buffer.alloc(10, 1));
    symlinkSync('/etc', join(dir, 'vol/link'));
    const blocks = (p: string) => BigInt(lstatSync(p).blocks) * 512n;
    const expected =
      blocks(join(dir, 'vol')) +
      blocks(join(dir, 'vol/sub')) +
      blocks(join(dir, 'vol/a')) +
      blocks(join(dir, 'vol/sub/b')) +
      blocks(join(dir, 'vol/link'));
    const [u, ...rest] = await diskUsage([join(dir, 'vol'), join(dir, 'missing')]);
    expect(rest).toEqual([]);
    expect(u.path).toBe(join(dir, 'vol'));
    // The symlink is counted as an inode but not followed.
    expect(u.inodesUsed).toBe(5n);
    expect(u.usedBytes).toBe(expected);
    expect(u.usedBytes).toBeGreaterThanOrEqual(1024n * 1024n);
  });
});
