import { describe, expect, it } from 'vitest';
import { ContainerSchema } from '../../src/api/pod.js';
import { goJSONString, hashChanged, hashContainer } from '../../src/pod/container-hash.js';

const sample = () =>
  ContainerSchema.parse({
    name: 'test_container',
    image: 'foo/image:v1',
    command: ['/bin/testcmd'],
    args: ['/bin/sh', '-c', 'echo abc'],
    ports: [{ containerPort: 8001 }],
    env: [{ name: 'ENV_FOO', value: 'bar' }],
    resources: { limits: { foo: '1G' }, requests: { foo: '500M' } },
  });

describe('hashContainer', () => {
  it("matches upstream's v1.31 vector (container_hash_test.go: 0x8e45cbd0)", () => {
    expect(hashContainer(sample())).toBe('8e45cbd0');
  });

  it('is stable across field order and repeated calls', () => {
    const a = hashContainer({ name: 'web', image: 'nginx:1.25' });
    const b = hashContainer(ContainerSchema.parse({ image: 'nginx:1.25', command: ['x'], name: 'web' }));
    expect(a).toBe(b);
    expect(hashContainer({ name: 'web', image: 'nginx:1.25' })).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{1,8}$/);
  });

  it('changes when the image or the name changes', () => {
    const base = hashContainer({ name: 'web', image: 'nginx:1.25' });
    expect(hashContainer({ name: 'web', image: 'nginx:1.26' })).not.toBe(base);
    expect(hashContainer({ name: 'web2', image: 'nginx:1.25' })).not.toBe(base);
  });

  it('ignores command, args, env and resources (immutable on a live pod; upstream hashes name+image only)', () => {
    const a = sample();
    const b = { ...sample(), command: ['/bin/other'], args: [], env: [], resources: { limits: { cpu: '2' } } };
    expect(hashContainer(b)).toBe(hashContainer(a));
  });

  it('treats a missing image as ""', () => {
    expect(hashContainer({ name: 'x' })).toBe(hashContainer({ name: 'x', image: '' }));
  });
});

describe('hashChanged', () => {
  it('compares as hex numbers (case and leading zeros do not matter; missing = 0)', () => {
    expect(hashChanged('8e45cbd0', '8E45CBD0')).toBe(false);
    expect(hashChanged('abc', '0abc')).toBe(false);
    expect(hashChanged('abc', '')).toBe(true);
    expect(hashChanged('abc', 'zz')).toBe(true);
  });
});

describe('goJSONString', () => {
  it('escapes like Go encoding/json', () => {
    expect(goJSONString('a<b>&"c')).toBe('"a\\u003cb\\u003e\\u0026\\"c"');
  });
});
