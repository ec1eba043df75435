import { lstat, mkdtemp, readFile, readdir, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AtomicWriter, validatePayloadPath, type Payload } from '../../src/main/volumes/atomic-writer.js';
import { FakeClock } from '../fakes/fake-clock.js';

const payload = (files: Record<string, string | [string, number]>): Payload =>
  new Map(
    Object.entries(files).map(([k, v]) => [k, { data: Buffer.from(Array.isArray(v) ? v[0] : v), mode: Array.isArray(v) ? v[1] : 0o644 }]),
  );

describe('validatePayloadPath (upstream validatePath)', () => {
  it.each([
    ['a', undefined],
    ['a/b/c', undefined],
    ['..a', 'must not start with'],
    ['', 'must not be empty'],
    ['/abs', 'must be relative'],
    ['a/../b', "must not contain '..'"],
    ['..', "must not contain '..'"],
    ['x'.repeat(256), 'filenames must be less than or equal to 255'],
    ['a/'.repeat(2049), 'must be less than or equal to 4096'],
  ])('%s', (p, problem) => {
    const got = validatePayloadPath(p);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
});

describe('AtomicWriter', () => {
  let dir: string;
  const clock = new FakeClock(Date.UTC(2026, 10, 23, 1, 2, 3));
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-aw-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes files behind ..data and user-visible symlinks, with exact modes', async () => {
    const w = new AtomicWriter(dir, clock);
    expect(await w.write(payload({ key: ['v1', 0o600], 'sub/dir/file': 'nested' }))).toBe(true);
    const ts = await readlink(join(dir, '..data'));
    expect(ts).toMatch(/^\.\.2026_11_23_01_02_03\./);
    expect(await readlink(join(dir, 'key'))).toBe('..data/key');
    expect(await readlink(join(dir, 'sub'))).toBe('..data/sub');
    expect(await readFile(join(dir, 'key'), 'utf8')).toBe('v1');
    expect(await readFile(join(dir, 'sub/dir/file'), 'utf8')).toBe('nested');
    expect((await stat(join(dir, 'key'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, ts))).mode & 0o777).toBe(0o755);
  });

  it('leaves everything alone when the content is unchanged', async () => {
    const w = new AtomicWriter(dir, clock);
    await w.write(payload({ a: '1' }));
    const ts = await readlink(join(dir, '..data'));
    expect(await w.write(payload({ a: '1' }))).toBe(false);
    expect(await readlink(join(dir, '..data'))).toBe(ts);
  });

  it('an update swaps ..data, removes names that left the payload and the old directory', async () => {
    const w = new AtomicWriter(dir, clock);
    await w.write(payload({ a: '1', b: '2' }));
    const old = await readlink(join(dir, '..data'));
    expect(await w.write(payload({ a: '10', c: '3' }))).toBe(true);
    const now = await readlink(join(dir, '..data'));
    expect(now).not.toBe(old);
    expect(await readFile(join(dir, 'a'), 'utf8')).toBe('10');
    expect(await readFile(join(dir, 'c'), 'utf8')).toBe('3');
    await expect(lstat(join(dir, 'b'))).rejects.toThrow(/ENOENT/);
    const names = await readdir(dir);
    expect(names.sort()).toEqual(['..data', 'a', 'c', now].sort());
  });

  it('recovers from a stale ..data_tmp left by a killed writer', async () => {
    const w = new AtomicWriter(dir, clock);
    await w.write(payload({ a: '1' }));
    const { symlink } = await import('node:fs/promises');
    await symlink('..gone', join(dir, '..data_tmp'));
    await w.write(payload({ a: '2' }));
    expect(await readFile(join(dir, 'a'), 'utf8')).toBe('2');
    await expect(lstat(join(dir, '..data_tmp'))).rejects.toThrow(/ENOENT/);
  });

  it('rejects an invalid payload path and writes nothing', async () => {
    const w = new AtomicWriter(dir, clock);
    await expect(w.write(payload({ '../escape': 'x' }))).rejects.toThrow("must not contain '..'");
    expect(await readdir(dir)).toEqual([]);
  });
});
