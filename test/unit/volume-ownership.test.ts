import { lstat, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { setVolumeOwnership } from '../../src/main/volumes/volume-ownership.js';

const pod = (fsGroup?: number, policy?: string): Pod => ({
  metadata: {},
  spec: { containers: [], securityContext: { fsGroup, fsGroupChangePolicy: policy } },
});
const isRoot = process.getuid?.() === 0;

describe.runIf(isRoot)('fsGroup ownership (upstream SetVolumeOwnership)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-own-'));
    await mkdir(join(dir, 'sub'), { mode: 0o700 });
    await writeFile(join(dir, 'sub/f'), 'x', { mode: 0o600 });
    await symlink('sub/f', join(dir, 'link'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const mode = async (p: string) => (await lstat(join(dir, p))).mode & 0o7777;

  it('read-write: group rw on files, rwx + setgid on directories, symlinks not chmod-ed', async () => {
    await setVolumeOwnership(dir, pod(4321), false);
    expect((await stat(join(dir, 'sub/f'))).gid).toBe(4321);
    expect((await lstat(join(dir, 'link'))).gid).toBe(4321);
    expect(await mode('sub/f')).toBe(0o660);
    expect(await mode('sub')).toBe(0o2770);
  });

  it('read-only volumes get group r only', async () => {
    await setVolumeOwnership(dir, pod(4321), true);
    expect(await mode('sub/f')).toBe(0o640);
    expect(await mode('sub')).toBe(0o2750);
  });

  it('OnRootMismatch skips the walk when the root already matches; no fsGroup does nothing', async () => {
    await setVolumeOwnership(dir, pod(), false);
    expect(await mode('sub/f')).toBe(0o600);
    await setVolumeOwnership(dir, pod(4321), false);
    await writeFile(join(dir, 'sub/new'), 'y', { mode: 0o600 });
    await setVolumeOwnership(dir, pod(4321, 'OnRootMismatch'), false);
    expect(await mode('sub/new')).toBe(0o600);
    await setVolumeOwnership(dir, pod(4321), false);
    expect(await mode('sub/new')).toBe(0o660);
  });
});
