import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../fakes/fake-clock.js';
import { decodePodManifest, parseDocument } from '../../src/main/podconfig/manifest.js';
import { parseGoQuantity, roundUpGoQuantity } from '../../src/main/podconfig/static-pod-uid/go-quantity.js';
import { UnreproducibleError, upstreamStaticPodUID } from '../../src/main/podconfig/static-pod-uid/static-pod-uid.js';

const dir = join(fileURLToPath(import.meta.url), '../../fixtures/static-pod-uid');

/** UIDs the Go kubelet v1.20.2 generated for these files (see the fixtures' README). */
const GO_KUBELET_UIDS: [file: string, uid: string][] = [
  ['minimal.yaml', '694975464f621ed6de33f61a15268e40'],
  ['apiserver.yaml', '338a6e96c8c20261266c3ce37e1881f5'],
  ['edge1.yaml', '4d4db116cf76af98724ec57daa1ee270'],
  ['edge2.yaml', '3249cc10df766408e248804ad390b3b5'],
  ['misc.yaml', '9826f55b0e2734101b94df412b66d146'],
  ['resources.yaml', 'dd89cec88405d5ed61ebcc74175e7a23'],
  ['empty-lists.json', 'c6a16c21bed5b8fa932e2b0830b0ada6'],
];

describe('static pod UID = the Go kubelet v1.20.2 one (md5 of go-spew of the internal pod)', () => {
  it.each(GO_KUBELET_UIDS)('%s → %s', (file, uid) => {
    const body = readFileSync(join(dir, file), 'utf8');
    expect(upstreamStaticPodUID(parseDocument(body, file, true))).toBe(uid);
  });

  it('the file source gives the pod that UID, whatever the node or path (v1.20.2 resets the hasher after writing them)', () => {
    const body = readFileSync(join(dir, 'apiserver.yaml'), 'utf8');
    const clock = new FakeClock();
    const ctx = (nodeName: string, manifestSource: string) => ({
      manifestSource,
      isFile: true,
      sourceName: 'file' as const,
      nodeName,
      clock,
    });
    const a = decodePodManifest(body, ctx('node-a', '/etc/kubernetes/manifests/kube-apiserver.yaml'));
    const b = decodePodManifest(body, ctx('node-b', '/srv/apiserver.yaml'));
    expect(a.metadata.uid).toBe('338a6e96c8c20261266c3ce37e1881f5');
    expect(b.metadata.uid).toBe(a.metadata.uid);
    expect(a.metadata.annotations?.['kubernetes.io/config.hash']).toBe(a.metadata.uid);
  });

  it('a manifest with a timestamp cannot be reproduced (time.Local is hashed) and says so', () => {
    const doc = parseDocument(
      'apiVersion: v1\nkind: Pod\nmetadata: {name: t, creationTimestamp: "2020-01-01T00:00:00Z"}\nspec: {containers: [{name: c, image: b}]}\n',
      't',
      true,
    );
    expect(() => upstreamStaticPodUID(doc)).toThrow(UnreproducibleError);
  });

  it('YAML is read with 1.1 rules, as go-yaml v2: 0644 is octal, yes is a boolean', () => {
    const doc = parseDocument('a: 0644\nb: yes\nc: "yes"\n', 'x');
    expect(doc).toEqual({ a: 420, b: true, c: 'yes' });
  });
});

describe('resource.Quantity in memory (apimachinery ParseQuantity + RoundUp(-3))', () => {
  const q = (s: string) => {
    const x = parseGoQuantity(s);
    roundUpGoQuantity(x, -3);
    return { i: [x.i.value, x.i.scale], d: x.d && [x.d.unscaled, x.d.scale], s: x.s, f: x.format };
  };
  it.each<[string, ReturnType<typeof q>]>([
    ['100m', { i: [100n, -3], d: null, s: '100m', f: 'DecimalSI' }],
    ['1Gi', { i: [1073741824n, 0], d: null, s: '1Gi', f: 'BinarySI' }],
    ['128Mi', { i: [134217728n, 0], d: null, s: '', f: 'BinarySI' }],
    ['0', { i: [0n, 0], d: null, s: '0', f: 'DecimalSI' }],
    ['1.5Gi', { i: [0n, 0], d: [1610612736000n, 3], s: '', f: 'BinarySI' }],
    ['1n', { i: [1n, -3], d: null, s: '', f: 'DecimalSI' }],
    ['5E3', { i: [5n, 3], d: null, s: '5E3', f: 'DecimalExponent' }],
    ['1.2345m', { i: [2n, -3], d: null, s: '', f: 'DecimalSI' }],
  ])('%s', (text, want) => {
    expect(q(text)).toEqual(want);
  });
});
