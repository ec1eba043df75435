import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { ManifestError } from '../../src/common/errors.js';
import { decodePodManifest, decodePodsManifest, manifestErrorsCounter, MANIFEST_ERRORS_METRIC } from '../../src/main/podconfig/manifest.js';
import { FakeClock } from '../fakes/fake-clock.js';

const ctx = {
  manifestSource: '/etc/kubernetes/manifests/web.yaml',
  isFile: true,
  sourceName: 'file',
  nodeName: 'node1',
  clock: new FakeClock(),
};

const podYaml = (name = 'web', image = 'nginx:1.25') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {app: web}
  extraMetaField: kept
spec:
  containers:
  - name: web
    image: ${image}
    someFutureField: {a: 1}
`;

function expectManifestError(fn: () => unknown, re: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).code).toBe('KTS_ERR_MANIFEST');
    expect((err as Error).message).toMatch(re);
    return;
  }
  throw new Error('expected a ManifestError');
}

describe('decodePodManifest', () => {
  it('decodes, defaults and keeps unknown fields', () => {
    const pod = decodePodManifest(podYaml(), ctx);
    expect(pod.metadata.name).toBe('web-node1');
    expect(pod.metadata.namespace).toBe('default');
    expect((pod.metadata as Record<string, unknown>)['extraMetaField']).toBe('kept');
    expect((pod.spec.containers[0] as Record<string, unknown>)['someFutureField']).toEqual({ a: 1 });
    expect(pod.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');
    expect(pod.metadata.annotations!['kubernetes.io/config.source']).toBe('file');
  });

  it('names each field the v1 Pod does not have, with its path and the closest name, as kubectl apply --validate does', () => {
    const unknown: { path: string; hint: string }[] = [];
    const pod = decodePodManifest(podYaml(), { ...ctx, onUnknownField: (f) => unknown.push(f) });
    expect(pod.metadata.name).toBe('web-node1'); // still decodes
    expect(unknown).toEqual([
      { path: 'metadata.extraMetaField', hint: '' },
      { path: 'spec.containers[0].someFutureField', hint: '' },
    ]);
    const typo = `apiVersion: v1
kind: Pod
metadata: {name: t, labls: {a: b}}
spec:
  containers:
  - name: c
    image: x:1
    comand: [sleep, "1"]
    ports: [{containerPort: 80, protocl: TCP}]
  volumes: [{name: v, emptyDir: {medum: Memory}}]
`;
    unknown.length = 0;
    decodePodManifest(typo, { ...ctx, onUnknownField: (f) => unknown.push(f) });
    expect(unknown).toEqual([
      { path: 'metadata.labls', hint: 'did you mean labels?' },
      { path: 'spec.containers[0].comand', hint: 'did you mean command?' },
      { path: 'spec.containers[0].ports[0].protocl', hint: 'did you mean protocol?' },
      { path: 'spec.volumes[0].emptyDir.medum', hint: 'did you mean medium?' },
    ]);
  });

  it('a pod that fails validation names its unknown fields in the error: `imagee` explains "image: Required value"', () => {
    const unknown: unknown[] = [];
    expectManifestError(
      () =>
        decodePodManifest('apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec:\n  containers:\n  - name: c\n    imagee: x:1\n', {
          ...ctx,
          onUnknownField: (f) => unknown.push(f),
        }),
      /spec\.containers\[0\]\.image: Required value; unknown field spec\.containers\[0\]\.imagee \(did you mean image\?\); fix the manifest/,
    );
    expect(unknown).toEqual([]);
  });

  it('newer v1 fields (native sidecars, grpc probes) and maps with free keys are not unknown', () => {
    const unknown: unknown[] = [];
    const doc = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'n', annotations: { anything: 'x' }, labels: { 'app.kubernetes.io/name': 'n' } },
      spec: {
        initContainers: [{ name: 's', image: 'x:1', restartPolicy: 'Always' }],
        containers: [{ name: 'c', image: 'x:1', livenessProbe: { grpc: { port: 9000 } }, resources: { limits: { cpu: '1' } } }],
        nodeSelector: { disk: 'ssd' },
      },
    };
    decodePodManifest(JSON.stringify(doc), { ...ctx, onUnknownField: (f) => unknown.push(f) });
    expect(unknown).toEqual([]);
  });

  it('accepts JSON', () => {
    const json = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'j' },
      spec: { containers: [{ name: 'c', image: 'x:1' }] },
    });
    expect(decodePodManifest(json, ctx).metadata.name).toBe('j-node1');
  });

  it('gives the same UID for the same content and a different one for changed content', () => {
    expect(decodePodManifest(podYaml(), ctx).metadata.uid).toBe(decodePodManifest(podYaml(), ctx).metadata.uid);
    expect(decodePodManifest(podYaml(), ctx).metadata.uid).not.toBe(decodePodManifest(podYaml('web', 'nginx:1.26'), ctx).metadata.uid);
  });

  it.each([
    ['malformed YAML', 'kind: Pod\n  bad: [', /web\.yaml: not valid YAML or JSON/],
    ['not an object', '- a\n- b', /web\.yaml: the document is not an object/],
    ['missing kind', 'apiVersion: v1\nmetadata: {name: a}', /Object 'Kind' is missing/],
    ['wrong kind', 'apiVersion: v1\nkind: Service\nmetadata: {name: a}', /kind "Service" is not one of Pod/],
    ['wrong apiVersion', 'apiVersion: v2\nkind: Pod\nmetadata: {name: a}', /apiVersion "v2" is not "v1"/],
    [
      'wrong field type',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x, ports: [{containerPort: "80"}]}]}',
      /not a valid Pod: spec\.containers\.0\.ports\.0\.containerPort/,
    ],
    ['invalid pod', podYaml('Bad_Name'), /web\.yaml: invalid pod: metadata\.name: Invalid value: "Bad_Name-node1"/],
    ['a PodList is not a file manifest', 'apiVersion: v1\nkind: PodList\nitems: []', /kind "PodList" is not one of Pod/],
    ['empty', '', /the document is not an object/],
  ])('%s → ManifestError', (_n, body, re) => {
    expectManifestError(() => decodePodManifest(body, ctx), re);
    expectManifestError(() => decodePodManifest(body, ctx), /fix the manifest/);
  });
});

describe('decodePodsManifest', () => {
  const http = { ...ctx, manifestSource: 'http://127.0.0.1/pods', isFile: false, sourceName: 'http' };

  it('accepts a single Pod', () => {
    expect(decodePodsManifest(podYaml(), http).map((p) => p.metadata.name)).toEqual(['web-node1']);
  });

  it.each(['PodList', 'List'])('accepts kind %s', (kind) => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind,
      items: ['a', 'b'].map((n) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: n },
        spec: { containers: [{ name: 'c', image: 'x:1' }] },
      })),
    });
    const pods = decodePodsManifest(body, http);
    expect(pods.map((p) => p.metadata.name)).toEqual(['a-node1', 'b-node1']);
    expect(pods[0].spec.tolerations).toBeUndefined();
  });

  it('rejects the whole list when one item is invalid', () => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'PodList',
      items: [
        { metadata: { name: 'ok' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
        { metadata: { name: 'bad' }, spec: { containers: [] } },
      ],
    });
    expectManifestError(() => decodePodsManifest(body, http), /items\[1\]: invalid pod: spec\.containers: Required value/);
  });

  it('rejects a non-Pod item in a List', () => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } }],
    });
    expectManifestError(() => decodePodsManifest(body, http), /items\[0\]: kind "Service"/);
  });
});

describe('manifestErrorsCounter', () => {
  it('registers once per registry', async () => {
    const reg = new Registry();
    const a = manifestErrorsCounter(reg);
    expect(manifestErrorsCounter(reg)).toBe(a);
    a.inc({ source: 'file' });
    expect(await reg.getSingleMetricAsString(MANIFEST_ERRORS_METRIC)).toContain(
      'kubelet_ts_static_pod_manifest_errors_total{source="file"} 1',
    );
  });
});
