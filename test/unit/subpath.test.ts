import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanSubPaths, prepareSafeSubpath, safeMakeDir } from '../../src/pod/subpath.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

describe('safe subPath binds (upstream subpath_linux)', () => {
  let dir: string;
  let vol: string;
  let podDir: string;
  let mounter: FakeMounter;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-sp-'));
    vol = join(dir, 'vol');
    podDir = join(dir, 'pod');
    await mkdir(vol, { mode: 0o777 });
    await mkdir(podDir);
    await mkdir(join(dir, 'outside'));
    mounter = new FakeMounter();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const req = (subPath: string, index = 0) => ({ volumePath: vol, subPath, volumeName: 'data', podDir, containerName: 'app', index });
  const target = (i = 0) => join(podDir, 'volume-subpaths/data/app', String(i));

  it('binds an existing directory through a /proc fd to the per-container target', async () => {
    await mkdir(join(vol, 'a/b'), { recursive: true });
    expect(await prepareSafeSubpath(mounter, req('a/b'))).toBe(target());
    expect(mounter.calls).toEqual([expect.stringMatching(new RegExp(`^bind /proc/${process.pid}/fd/\\d+ ${target()}$`))]);
    expect((await stat(target())).isDirectory()).toBe(true);
  });

  it('binds a file onto a file target', async () => {
    await writeFile(join(vol, 'f'), 'x');
    await prepareSafeSubpath(mounter, req('f', 3));
    expect((await stat(target(3))).isFile()).toBe(true);
  });

  it('creates a missing subPath directory with the volume root mode', async () => {
    await chmod(vol, 0o777);
    await prepareSafeSubpath(mounter, req('new/deep'));
    const st = await stat(join(vol, 'new/deep'));
    expect(st.isDirectory()).toBe(true);
    expect(st.mode & 0o777).toBe(0o777);
  });

  it('allows a symlink that stays inside the volume', async () => {
    await mkdir(join(vol, 'real'));
    await symlink('real', join(vol, 'link'));
    await expect(prepareSafeSubpath(mounter, req('link'))).resolves.toBe(target());
  });

  it.each([
    ['an absolute symlink out of the volume', '/'],
    ['a relative symlink out of the volume', '../outside'],
  ])('refuses %s and mounts nothing', async (_name, to) => {
    await symlink(to, join(vol, 'escape'));
    await expect(prepareSafeSubpath(mounter, req('escape'))).rejects.toMatchObject({
      code: 'KTS_ERR_SUBPATH',
      message: expect.stringMatching(/^failed to prepare subPath for volumeMount "\w+" of container "\w+"$/) as string,
      detail: expect.stringMatching(/not within volume path/) as string,
    });
    expect(mounter.calls).toEqual([]);
  });

  it('refuses to create directories through a symlink that leaves the volume', async () => {
    await symlink(join(dir, 'outside'), join(vol, 'escape'));
    await expect(safeMakeDir('escape/new', vol, 0o755)).rejects.toThrow(/outside the volume/);
    await expect(stat(join(dir, 'outside/new'))).rejects.toThrow(/ENOENT/);
  });

  it('reuses a bind that still shows the same file, and cleanSubPaths unmounts and removes everything', async () => {
    await mkdir(join(vol, 'a'));
    await prepareSafeSubpath(mounter, req('a'));
    // The fake does not really bind: make the target look like the source for the reuse check.
    await rm(target(), { recursive: true });
    await symlink(join(vol, 'a'), target());
    await prepareSafeSubpath(mounter, req('a'));
    expect(mounter.calls.filter((c) => c.startsWith('bind'))).toHaveLength(1);
    await rm(target());
    await mkdir(target());
    await cleanSubPaths(mounter, podDir, 'data');
    expect(mounter.mounts).toEqual([]);
    await expect(stat(join(podDir, 'volume-subpaths'))).rejects.toThrow(/ENOENT/);
  });
});
