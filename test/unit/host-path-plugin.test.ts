import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { silentLogger } from '../../src/common/logger.js';
import { checkHostPathType, hostPathPlugin } from '../../src/main/volumes/host-path-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

describe('hostPath type checks (upstream checkType)', () => {
  let dir: string;
  const server = createServer();
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-hp-'));
    await mkdir(join(dir, 'd'));
    await writeFile(join(dir, 'f'), 'x');
    await new Promise<void>((r) => server.listen(join(dir, 's.sock'), r));
  });
  afterAll(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['', 'missing', undefined],
    ['Directory', 'd', undefined],
    ['Directory', 'f', "is not a directory, it's a File"],
    ['Directory', 'missing', "doesn't exist"],
    ['File', 'f', undefined],
    ['File', 'd', "is not a file, it's a Directory"],
    ['Socket', 's.sock', undefined],
    ['Socket', 'f', "is not a socket file, it's a File"],
    ['CharDevice', '/dev/null', undefined],
    ['CharDevice', 'd', "is not a character device, it's a Directory"],
    ['BlockDevice', '/dev/null', "is not a block device, it's a CharDevice"],
    ['FileOrCreate', 'd', "is not a file, it's a Directory"],
    ['DirectoryOrCreate', 'f', "is not a directory, it's a File"],
    ['Bogus', 'd', 'Bogus is an invalid volume type'],
  ])('type %j on %s', async (type, name, error) => {
    const path = name.startsWith('/') ? name : join(dir, name);
    const check = checkHostPathType(path, type);
    if (error === undefined) await expect(check).resolves.toBeUndefined();
    else await expect(check).rejects.toThrow(error);
  });

  it('DirectoryOrCreate creates the directory (0755, parents too); FileOrCreate an empty 0644 file', async () => {
    await checkHostPathType(join(dir, 'new/deep'), 'DirectoryOrCreate');
    expect((await stat(join(dir, 'new/deep'))).mode & 0o777).toBe(0o755);
    await checkHostPathType(join(dir, 'new/file'), 'FileOrCreate');
    const st = await stat(join(dir, 'new/file'));
    expect(st.isFile() && st.size === 0 && (st.mode & 0o777) === 0o644).toBe(true);
  });

  it('the plugin refuses relative paths and .. and returns the host path itself', async () => {
    const host = {
      rootDir: dir,
      mounter: new FakeMounter(),
      clock: new FakeClock(),
      logger: silentLogger(),
      nodeAllocatable: { cpu: '1', memory: '1Gi' },
    };
    const pod = { metadata: {}, spec: {} } as Pod;
    await expect(hostPathPlugin.setUp(pod, { name: 'v', hostPath: { path: 'rel' } }, host)).rejects.toThrow('must be an absolute path');
    await expect(hostPathPlugin.setUp(pod, { name: 'v', hostPath: { path: '/a/../b' } }, host)).rejects.toThrow("must not contain '..'");
    await expect(hostPathPlugin.setUp(pod, { name: 'v', hostPath: { path: join(dir, 'd'), type: 'Directory' } }, host)).resolves.toEqual({
      path: join(dir, 'd'),
      readOnly: false,
    });
  });
});
