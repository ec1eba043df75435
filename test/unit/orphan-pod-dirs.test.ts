import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { cleanupOrphanedPodDirs } from '../../src/main/volumes/orphan-pod-dirs.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

describe('cleanupOrphanedPodDirs', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-orphan-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const pod = (uid: string, ...sub: string[]) => mkdir(join(root, 'pods', uid, ...sub), { recursive: true });

  it('removes only pods that are inactive, hold no volumes and have nothing left on disk or mounted', async () => {
    await pod('active', 'containers/app');
    await pod('gone', 'containers/app');
    await pod('gone-empty-plugin-dir', 'volumes/kubernetes.io~empty-dir');
    await pod('held');
    await pod('volume-on-disk', 'volumes/kubernetes.io~secret/token');
    await pod('subpath-left', 'volume-subpaths/data/app/0');
    await pod('mounted', 'etc');
    const mounter = new FakeMounter();
    await mounter.mount('tmpfs', join(root, 'pods/mounted/etc'), 'tmpfs');
    const removed = await cleanupOrphanedPodDirs({
      rootDir: root,
      mounter,
      logger: silentLogger(),
      isActive: (uid) => uid === 'active',
      hasVolumes: (uid) => uid === 'held',
    });
    expect(removed.sort()).toEqual(['gone', 'gone-empty-plugin-dir']);
    expect((await readdir(join(root, 'pods'))).sort()).toEqual(['active', 'held', 'mounted', 'subpath-left', 'volume-on-disk']);
  });

  it('does nothing without a pods directory', async () => {
    expect(
      await cleanupOrphanedPodDirs({
        rootDir: root,
        mounter: new FakeMounter(),
        logger: silentLogger(),
        isActive: () => false,
        hasVolumes: () => false,
      }),
    ).toEqual([]);
  });
});
