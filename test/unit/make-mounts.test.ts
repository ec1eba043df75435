import { mkdir, mkdtemp, readFile, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/pod.js';
import { SubpathError } from '../../src/common/errors.js';
import { MountPropagation } from '../../src/gen/runtime/v1/api.js';
import { managedHostsFileContent } from '../../src/workers/sync/etc-hosts.js';
import { expandSubPathExpr, makeMounts, mountPropagation, subPathProblem } from '../../src/workers/sync/make-mounts.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

const base: Pod = { metadata: { uid: 'u', name: 'web-0', namespace: 'prod' }, spec: { containers: [] } };

describe('makeMounts helpers', () => {
  it.each([
    [undefined, MountPropagation.PROPAGATION_PRIVATE],
    ['None', MountPropagation.PROPAGATION_PRIVATE],
    ['HostToContainer', MountPropagation.PROPAGATION_HOST_TO_CONTAINER],
    ['Bidirectional', MountPropagation.PROPAGATION_BIDIRECTIONAL],
  ])('propagation %s', (mode, want) => expect(mountPropagation(mode)).toBe(want));

  it('an unknown propagation mode is an error', () =>
    expect(() => mountPropagation('Both')).toThrow('invalid MountPropagation mode: "Both"'));

  it.each([
    ['a/b', undefined],
    ['/etc', 'error SubPath `/etc` must not be an absolute path'],
    ['../x', "unable to provision SubPath `../x`: must not contain '..'"],
    ['a/../../x', "unable to provision SubPath `a/../../x`: must not contain '..'"],
    ['a..b', undefined],
  ])('subPath %s', (p, want) => expect(subPathProblem(p)).toBe(want));

  it('subPathExpr expands $(VAR) and refuses missing or empty values', () => {
    const env = [
      { name: 'POD', value: 'web-0' },
      { name: 'EMPTY', value: '' },
    ];
    expect(expandSubPathExpr('logs/$(POD)', env)).toBe('logs/web-0');
    expect(() => expandSubPathExpr('$(NOPE)/$(EMPTY)', env)).toThrow('missing value for EMPTY, NOPE');
  });

  it('managed hosts file as upstream, with a domain and host aliases', () => {
    const pod: Pod = { ...base, spec: { containers: [], hostAliases: [{ ip: '10.0.0.9', hostnames: ['a', 'b'] }] } };
    expect(managedHostsFileContent(['10.1.0.5'], 'web-0', 'svc1.prod.svc.cluster.local', pod)).toBe(
      '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n' +
        'fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n' +
        '10.1.0.5\tweb-0.svc1.prod.svc.cluster.local\tweb-0\n\n# Entries added by HostAliases.\n10.0.0.9\ta\tb\n',
    );
  });
});

describe('makeMounts', () => {
  let dir: string;
  let podDir: string;
  let mounter: FakeMounter;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-mm-'));
    podDir = join(dir, 'pods/u');
    await mkdir(join(dir, 'vol/sub'), { recursive: true });
    await mkdir(podDir, { recursive: true });
    mounter = new FakeMounter();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const run = (c: Container, podIPs = ['10.1.0.5']) =>
    makeMounts(base, c, {
      podDir,
      volumes: { data: { path: join(dir, 'vol'), readOnly: false }, cfg: { path: '/cfg', readOnly: true } },
      podIPs,
      hostname: 'web-0',
      domain: '',
      env: [],
      mounter,
    });

  it('volume mounts (read-only forced by the plugin), the hosts file and a fresh termination-log file', async () => {
    const c: Container = {
      name: 'app',
      image: 'i',
      terminationMessagePath: '/dev/termination-log',
      volumeMounts: [
        { name: 'data', mountPath: '/data' },
        { name: 'cfg', mountPath: '/etc/cfg' },
        { name: 'data', mountPath: '/ro', readOnly: true, mountPropagation: 'HostToContainer' },
      ],
    };
    const mounts = await run(c);
    expect(mounts.map((m) => [m.containerPath, m.hostPath, m.readonly, m.propagation ?? 0])).toEqual([
      ['/data', join(dir, 'vol'), false, 0],
      ['/etc/cfg', '/cfg', true, 0],
      ['/ro', join(dir, 'vol'), true, MountPropagation.PROPAGATION_HOST_TO_CONTAINER],
      ['/etc/hosts', join(podDir, 'etc-hosts'), false, 0],
      ['/dev/termination-log', expect.stringMatching(new RegExp(`^${podDir}/containers/app/[0-9a-f]{8}$`)), false, 0],
    ]);
    expect(await readFile(join(podDir, 'etc-hosts'), 'utf8')).toContain('10.1.0.5\tweb-0\n');
    const [tlog] = await readdir(join(podDir, 'containers/app'));
    expect((await stat(join(podDir, 'containers/app', tlog))).mode & 0o777).toBe(0o666);
  });

  it('no hosts file without pod IPs or when a volume mounts /etc/hosts', async () => {
    expect((await run({ name: 'a', image: 'i' }, [])).map((m) => m.containerPath)).toEqual([]);
    expect(
      (await run({ name: 'a', image: 'i', volumeMounts: [{ name: 'data', mountPath: '/etc/hosts' }] })).map((m) => m.hostPath),
    ).toEqual([join(dir, 'vol')]);
  });

  it('a subPath becomes a bind under volume-subpaths', async () => {
    const mounts = await run({ name: 'app', image: 'i', volumeMounts: [{ name: 'data', mountPath: '/s', subPath: 'sub' }] });
    expect(mounts[0].hostPath).toBe(join(podDir, 'volume-subpaths/data/app/0'));
    expect(mounter.calls).toHaveLength(1);
  });

  it.each([
    [{ name: 'nope', mountPath: '/x' }, 'cannot find volume "nope" to mount into container "app"'],
    [{ name: 'data', mountPath: '/x', subPath: '/abs' }, 'must not be an absolute path'],
    [{ name: 'data', mountPath: '/x', subPath: 'escape' }, /^failed to prepare subPath for volumeMount "data" of container "app"$/],
    [
      { name: 'data', mountPath: '/x', subPath: 'escape/new' },
      /^failed to create subPath directory for volumeMount "data" of container "app"$/,
    ],
    [{ name: 'data', mountPath: '/x', recursiveReadOnly: 'Enabled' }, 'recursiveReadOnly Enabled is not supported'],
  ])('refuses %j', async (m, msg) => {
    await symlink('/', join(dir, 'vol/escape'));
    await expect(run({ name: 'app', image: 'i', volumeMounts: [m] })).rejects.toThrow(msg);
    expect(mounter.calls).toEqual([]);
  });

  it.each([
    ['escape', `subpath "/" not within volume path`],
    ['escape/new', `path "escape/new" resolves to /, outside the volume`],
  ])('an escaping subPath %s is a SubpathError: the host paths are in its detail only', async (subPath, detail) => {
    await symlink('/', join(dir, 'vol/escape'));
    const err = await run({ name: 'app', image: 'i', volumeMounts: [{ name: 'data', mountPath: '/x', subPath }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubpathError);
    expect((err as SubpathError).message).not.toContain(dir);
    expect((err as SubpathError).detail).toContain(detail);
    expect((err as SubpathError).detail).toContain(join(dir, 'vol'));
  });
});
