import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MountHelper } from '../../src/common/mount-helper.js';
import { LinuxMounter } from '../../src/common/mounter.js';

const isRoot = process.getuid?.() === 0;

describe('MountHelper', () => {
  const helper = new MountHelper(5_000);
  afterAll(() => helper.close());

  it('reports a failing command with its output, and keeps serving after it', async () => {
    await expect(helper.run('umount', ['/nonexistent-kts-path'])).rejects.toThrow(
      /umount failed: .*nonexistent-kts-path.* \(command: umount \/nonexistent-kts-path\)/,
    );
    await expect(helper.run('umount', ['/also-missing with space'])).rejects.toThrow(/also-missing with space/);
  });

  it('runs only mount and umount', async () => {
    await expect(helper.run('rm' as never, ['-rf', '/x'])).rejects.toThrow('command not allowed: rm');
  });

  it('starts a new helper after the old one was stopped', async () => {
    helper.close();
    await expect(helper.run('umount', ['/nonexistent-kts-path'])).rejects.toThrow(/umount failed/);
  });
});

describe.runIf(isRoot)('LinuxMounter through the helper (root)', () => {
  let dir: string;
  const helper = new MountHelper();
  const mounter = new LinuxMounter(helper.run);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-helper-'));
  });
  afterAll(async () => {
    helper.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('mounts a tmpfs, lists it and unmounts it, with concurrent requests answered in order', async () => {
    await Promise.all([mounter.mount('tmpfs', dir, 'tmpfs', ['size=1m']), mounter.list()]);
    const line = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === dir);
    expect(line).toContain(' - tmpfs tmpfs rw,size=1024k');
    expect((await mounter.list()).some((m) => m.mountPoint === dir && m.fsType === 'tmpfs')).toBe(true);
    await mounter.unmount(dir);
    expect((await mounter.list()).some((m) => m.mountPoint === dir)).toBe(false);
  });
});
