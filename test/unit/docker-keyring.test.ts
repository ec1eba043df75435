import { describe, expect, it } from 'vitest';
import { DockerKeyring, dockerConfigOf, isDefaultRegistryMatch, keyringKey, urlsMatch } from '../../src/main/images/docker-keyring.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('docker keyring (upstream credentialprovider)', () => {
  it.each([
    ['registry.local', 'registry.local'],
    ['https://index.docker.io/v1/', 'index.docker.io'],
    ['http://reg.example.com:5000/v2/team', 'reg.example.com:5000/team'],
    ['quay.io/org', 'quay.io/org'],
  ])('keyringKey(%s) = %s', (registry, key) => expect(keyringKey(registry)).toBe(key));

  it.each([
    ['*.example.com', 'reg.example.com/app', true],
    ['*.example.com', 'a.b.example.com/app', false],
    ['reg.example.com:5000', 'reg.example.com/app', false],
    ['reg.example.com/team', 'reg.example.com/team/app', true],
    ['reg.example.com/team', 'reg.example.com/other/app', false],
  ])('urlsMatch(%s, %s) = %s', (glob, target, want) => expect(urlsMatch(glob, target)).toBe(want));

  it.each([
    ['busybox', true],
    ['library/busybox', true],
    ['docker.io/library/busybox', true],
    ['registry.local/app', false],
    ['localhost:5000/app', false],
  ])('isDefaultRegistryMatch(%s) = %s', (image, want) => expect(isDefaultRegistryMatch(image)).toBe(want));

  it('reads dockerconfigjson and dockercfg secrets, decoding auth into username and password', () => {
    const json = dockerConfigOf('kubernetes.io/dockerconfigjson', {
      '.dockerconfigjson': b64(JSON.stringify({ auths: { 'registry.local': { auth: b64('alice:s3cret') } } })),
    });
    const cfg = dockerConfigOf('kubernetes.io/dockercfg', {
      '.dockercfg': b64(JSON.stringify({ 'quay.io': { username: 'bob', password: 'pw' } })),
    });
    expect(dockerConfigOf('Opaque', { '.dockerconfigjson': b64('{}') })).toBeUndefined();
    const k = new DockerKeyring();
    k.add(json!);
    k.add(cfg!);
    expect(k.lookup('registry.local/app')).toEqual([{ username: 'alice', password: 's3cret' }]);
    expect(k.lookup('quay.io/x/y')).toEqual([{ username: 'bob', password: 'pw' }]);
    expect(k.lookup('other.io/x')).toEqual([]);
    expect(() => dockerConfigOf('kubernetes.io/dockercfg', { '.dockercfg': b64('{not json') })).toThrow();
  });

  it('most specific registry first; Docker Hub images use the index.docker.io credentials', () => {
    const k = new DockerKeyring();
    k.add({ 'reg.example.com': { username: 'wide', password: 'w' }, 'reg.example.com/team': { username: 'team', password: 't' } });
    k.add({ 'https://index.docker.io/v1/': { username: 'hub', password: 'h' } });
    expect(k.lookup('reg.example.com/team/app').map((a) => a.username)).toEqual(['team', 'wide']);
    expect(k.lookup('docker.io/library/busybox').map((a) => a.username)).toEqual(['hub']);
    expect(k.lookup('registry.local/app')).toEqual([]);
  });
});
