import { describe, expect, it } from 'vitest';
import { isMountPoint, makeRShared, mountsUnder, parseMountInfo, unescapeMountField } from '../../src/common/mounter.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

const TEXT = [
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard',
  '59 27 0:58 / /var/lib/kts/pods/u1/volumes/kubernetes.io~empty-dir/mem rw,relatime shared:5 - tmpfs tmpfs rw,size=65536k',
  '60 27 254:0 /data/sub /var/lib/kts/pods/u1/volume-subpaths/data/app/0 rw,relatime - ext4 /dev/vda rw',
  '61 27 0:60 / /mnt/with\\040space rw - tmpfs tmpfs rw',
  'garbage line',
].join('\n');

describe('parseMountInfo', () => {
  const mounts = parseMountInfo(TEXT);

  it('parses every well-formed line, with optional fields and the super options', () => {
    expect(mounts).toHaveLength(4);
    expect(mounts[1]).toMatchObject({
      id: 59,
      parentId: 27,
      device: '0:58',
      root: '/',
      mountPoint: '/var/lib/kts/pods/u1/volumes/kubernetes.io~empty-dir/mem',
      optional: ['shared:5'],
      fsType: 'tmpfs',
      source: 'tmpfs',
      superOptions: ['rw', 'size=65536k'],
    });
    expect(mounts[2].root).toBe('/data/sub');
  });

  it('decodes octal escapes', () => {
    expect(mounts[3].mountPoint).toBe('/mnt/with space');
    expect(unescapeMountField('a\\011b\\134c')).toBe('a\tb\\c');
  });

  it('finds mount points and the mounts below a directory, deepest first', () => {
    expect(isMountPoint(mounts, '/var/lib/kts/pods/u1/volumes/kubernetes.io~empty-dir/mem')).toBe(true);
    expect(isMountPoint(mounts, '/var/lib/kts/pods/u1')).toBe(false);
    expect(mountsUnder(mounts, '/var/lib/kts/pods/u1').map((m) => m.id)).toEqual([59, 60]);
    expect(mountsUnder(mounts, '/var/lib/kts/pods/u').length).toBe(0);
  });
});

describe('makeRShared', () => {
  const info = (mountPoint: string, optional: string[] = []) => ({
    id: 1,
    parentId: 0,
    device: '0:1',
    root: '/',
    mountPoint,
    options: [],
    optional,
    fsType: 'ext4',
    source: 'x',
    superOptions: [],
  });
  it.each([
    ['binds and shares a plain directory', [], ['bind /r /r', 'make-rshared /r']],
    ['only shares a private mount point', [info('/r')], ['make-rshared /r']],
    ['leaves a shared mount alone', [info('/r', ['shared:7'])], []],
  ])('%s', async (_n, mounts, calls) => {
    const m = new FakeMounter({ exists: () => true });
    m.mounts.push(...mounts);
    await makeRShared(m, '/r');
    expect(m.calls).toEqual(calls);
  });

  it('refuses to hide mounts below a directory that is not a mount point', async () => {
    const m = new FakeMounter({ exists: () => true });
    m.mounts.push(info('/r/pods/u/volumes/x'));
    await expect(makeRShared(m, '/r')).rejects.toThrow(/mounts are below it .* mount --bind \/r \/r && mount --make-rshared \/r/);
    expect(m.calls).toEqual([]);
  });
});
