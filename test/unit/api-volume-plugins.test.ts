import { mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigMap, Secret, Volume } from '../../src/api/core-v1.js';
import type { Pod } from '../../src/api/pod.js';
import { ApiStatusError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import { configMapKeys, configMapPlugin, keysPayload, secretKeys, secretPlugin } from '../../src/main/volumes/object-volume-plugins.js';
import { fsUserFrom, projectedPlugin } from '../../src/main/volumes/projected-plugin.js';
import type { ObjectRef, VolumeHost } from '../../src/main/volumes/volume-plugin.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeMounter } from '../fakes/fake-mounter.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const text = (p: Map<string, { data: Buffer; mode: number }>) =>
  Object.fromEntries([...p].map(([k, v]) => [k, [v.data.toString(), v.mode.toString(8)]]));
const cm: ConfigMap = { metadata: { name: 'app' }, data: { 'a.conf': 'A' }, binaryData: { bin: b64('\x00\x01') } };
const secret: Secret = { metadata: { name: 's' }, data: { user: b64('admin'), pass: b64('hunter2') } };

describe('payloads (upstream MakePayload)', () => {
  it.each([
    ['all keys with the default mode', undefined, false, { 'a.conf': ['A', '644'], bin: ['\x00\x01', '644'] }],
    ['listed items with their own mode and path', [{ key: 'a.conf', path: 'dir/a', mode: 0o400 }], false, { 'dir/a': ['A', '400'] }],
    ['a missing key of an optional configMap is skipped', [{ key: 'nope', path: 'n' }], true, {}],
  ])('configMap: %s', (_n, items, optional, want) => {
    expect(text(keysPayload('configmap', configMapKeys(cm), items, 0o644, optional))).toEqual(want);
  });

  it('configMap: a missing key is an error', () => {
    expect(() => keysPayload('configmap', configMapKeys(cm), [{ key: 'nope', path: 'n' }], 0o644, false)).toThrow(
      'configmap references non-existent config key: nope',
    );
  });

  it('secret: decodes base64, items and modes; a missing key is an error', () => {
    expect(text(keysPayload('secret', secretKeys(secret), undefined, 0o400, false))).toEqual({
      user: ['admin', '400'],
      pass: ['hunter2', '400'],
    });
    expect(text(keysPayload('secret', secretKeys(secret), [{ key: 'pass', path: 'p', mode: 0o600 }], 0o644, false))).toEqual({
      p: ['hunter2', '600'],
    });
    expect(() => keysPayload('secret', secretKeys(secret), [{ key: 'x', path: 'x' }], 0o644, false)).toThrow(
      'references non-existent secret key: x',
    );
  });

  it.each([
    ['all containers as 1000', [1000, 1000], undefined, 1000],
    ['the pod default', [undefined, undefined], 2000, 2000],
    ['different users', [1000, 1001], undefined, undefined],
    ['one container without a user', [1000, undefined], undefined, undefined],
  ])('fsUserFrom: %s', (_n, users, podUser, want) => {
    const pod = {
      metadata: {},
      spec: {
        securityContext: podUser === undefined ? {} : { runAsUser: podUser },
        containers: users.map((u, i) => ({ name: `c${i}`, image: 'i', securityContext: u === undefined ? {} : { runAsUser: u } })),
      },
    } as Pod;
    expect(fsUserFrom(pod)).toBe(want);
  });
});

describe('configMap, secret and projected plugins', () => {
  let root: string;
  let mounter: FakeMounter;
  let objects: Map<string, ConfigMap | Secret>;
  let host: VolumeHost;
  const pod: Pod = {
    metadata: { uid: 'u1', name: 'web', namespace: 'ns', labels: { tier: 'front' } },
    spec: { serviceAccountName: 'default', containers: [] },
  };
  const tokenRequests: unknown[] = [];

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-apivol-'));
    mounter = new FakeMounter();
    objects = new Map<string, ConfigMap | Secret>([
      ['configmap/app', cm],
      ['secret/s', secret],
    ]);
    host = {
      rootDir: root,
      mounter,
      clock: new FakeClock(),
      logger: silentLogger(),
      nodeAllocatable: { cpu: '1', memory: '1Gi' },
      objects: {
        register: () => undefined,
        unregister: () => undefined,
        onChange: () => undefined,
        get: async (r: ObjectRef) => {
          const o = objects.get(`${r.kind}/${r.name}`);
          if (!o) throw new ApiStatusError(`${r.kind} "${r.name}" not found`, 404, 'NotFound');
          return o;
        },
      },
      tokens: {
        getServiceAccountToken: async (ns, sa, spec) => {
          tokenRequests.push({ ns, sa, spec });
          return { spec, status: { token: 'jwt', expirationTimestamp: '2030-01-01T00:00:00Z' } };
        },
        deletePodTokens: () => undefined,
      },
    };
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const dir = (plugin: string, name: string) => join(root, 'pods/u1/volumes', plugin, name);

  it('configMap: files on disk (no tmpfs), read-only for containers; an update rewrites them', async () => {
    const v: Volume = { name: 'cfg', configMap: { name: 'app', defaultMode: 0o640 } };
    expect(await configMapPlugin.setUp(pod, v, host)).toEqual({ path: dir('kubernetes.io~configmap', 'cfg'), readOnly: true });
    expect(mounter.calls).toEqual([]);
    expect(await readFile(join(dir('kubernetes.io~configmap', 'cfg'), 'a.conf'), 'utf8')).toBe('A');
    expect((await stat(join(dir('kubernetes.io~configmap', 'cfg'), 'a.conf'))).mode & 0o777).toBe(0o640);
    objects.set('configmap/app', { metadata: { name: 'app' }, data: { 'a.conf': 'B' } });
    await configMapPlugin.setUp(pod, v, host);
    expect(await readFile(join(dir('kubernetes.io~configmap', 'cfg'), 'a.conf'), 'utf8')).toBe('B');
    await expect(stat(join(dir('kubernetes.io~configmap', 'cfg'), 'bin'))).rejects.toThrow(/ENOENT/);
  });

  it.each([
    ['a missing configMap', { name: 'x', configMap: { name: 'missing' } }, 'configmap "missing" not found'],
    ['a missing secret', { name: 'x', secret: { secretName: 'missing' } }, 'secret "missing" not found'],
  ])('%s fails the setup with the upstream message', async (_n, v, msg) => {
    const plugin = (v as Volume).configMap ? configMapPlugin : secretPlugin;
    await expect(plugin.setUp(pod, v as Volume, host)).rejects.toThrow(msg);
  });

  it('optional: a missing object gives an empty volume', async () => {
    await configMapPlugin.setUp(pod, { name: 'o', configMap: { name: 'missing', optional: true } }, host);
    expect(await readlink(join(dir('kubernetes.io~configmap', 'o'), '..data'))).toMatch(/^\.\./);
  });

  it('secret: files on a tmpfs with the requested modes', async () => {
    await secretPlugin.setUp(
      pod,
      {
        name: 'sec',
        secret: {
          secretName: 's',
          defaultMode: 0o400,
          items: [
            { key: 'pass', path: 'p', mode: 0o600 },
            { key: 'user', path: 'u' },
          ],
        },
      },
      host,
    );
    const d = dir('kubernetes.io~secret', 'sec');
    expect(mounter.mounts.map((m) => [m.mountPoint, m.fsType])).toEqual([[d, 'tmpfs']]);
    expect(await readFile(join(d, 'p'), 'utf8')).toBe('hunter2');
    expect((await stat(join(d, 'p'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(d, 'u'))).mode & 0o777).toBe(0o400);
  });

  it('projected: secret, configMap, downward API and a bound token in one tmpfs directory', async () => {
    await projectedPlugin.setUp(
      pod,
      {
        name: 'all',
        projected: {
          defaultMode: 0o444,
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3607, audience: 'api' } },
            { configMap: { name: 'app', items: [{ key: 'a.conf', path: 'ca.crt' }] } },
            { secret: { name: 's', items: [{ key: 'user', path: 'user' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      },
      host,
    );
    const d = dir('kubernetes.io~projected', 'all');
    const read = (f: string) => readFile(join(d, f), 'utf8');
    expect([await read('token'), await read('ca.crt'), await read('user'), await read('namespace')]).toEqual(['jwt', 'A', 'admin', 'ns']);
    expect((await stat(join(d, 'token'))).mode & 0o777).toBe(0o444);
    expect(tokenRequests).toEqual([
      {
        ns: 'ns',
        sa: 'default',
        spec: { audiences: ['api'], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' } },
      },
    ]);
  });

  it('projected: every failing source is reported', async () => {
    const v: Volume = { name: 'p', projected: { sources: [{ configMap: { name: 'missing' } }, { secret: { name: 'gone' } }] } };
    await expect(projectedPlugin.setUp(pod, v, host)).rejects.toThrow('[configmap "missing" not found, secret "gone" not found]');
  });

  it('standalone: configMap, secret and token sources need the apiserver; a downwardAPI projection does not', () => {
    const standalone = { ...host, objects: undefined, tokens: undefined };
    expect(configMapPlugin.check!(pod, { name: 'c', configMap: { name: 'x' } }, standalone)).toMatch(
      /^configMap volumes need the apiserver: kubelet-ts runs standalone/,
    );
    expect(secretPlugin.check!(pod, { name: 's', secret: { secretName: 'x' } }, standalone)).toMatch(/^secret volumes need the apiserver/);
    expect(
      projectedPlugin.check!(pod, { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }, standalone),
    ).toMatch(/^projected serviceAccountToken sources need the apiserver/);
    expect(
      projectedPlugin.check!(pod, { name: 'p', projected: { sources: [{ downwardAPI: { items: [] } }] } }, standalone),
    ).toBeUndefined();
    expect(projectedPlugin.check!(pod, { name: 'p', projected: { sources: [{ clusterTrustBundle: { path: 'x' } }] } }, host)).toBe(
      'projected clusterTrustBundle sources are not supported by kubelet-ts',
    );
  });
});
