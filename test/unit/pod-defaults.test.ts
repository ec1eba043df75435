import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import {
  applyStaticPodDefaults,
  applyV1Defaults,
  canonicalJSON,
  defaultImagePullPolicy,
  formatRFC3339Nano,
  fallbackStaticPodHash,
} from '../../src/main/podconfig/defaults.js';
import { FakeClock } from '../fakes/fake-clock.js';

const basePod = (): Pod =>
  PodSchema.parse({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'nginx:1.25',
          ports: [{ containerPort: 80 }],
          livenessProbe: { httpGet: { port: 80 } },
          env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          resources: { limits: { cpu: '1', memory: '128Mi' }, requests: { cpu: '500m' } },
        },
      ],
      volumes: [{ name: 'scratch' }],
    },
  });

const clock = new FakeClock(Date.UTC(2024, 0, 2, 3, 4, 5, 120));
const fileOpts = { manifestSource: '/etc/kubernetes/manifests/web.yaml', isFile: true, sourceName: 'file', nodeName: 'Node-A', clock };

describe('defaultImagePullPolicy', () => {
  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.25', 'IfNotPresent'],
    ['localhost:5000/nginx', 'Always'],
    ['localhost:5000/nginx:v1', 'IfNotPresent'],
    ['nginx@sha256:abcd', 'IfNotPresent'],
    ['nginx:latest@sha256:abcd', 'IfNotPresent'],
  ])('%s → %s', (image, policy) => expect(defaultImagePullPolicy(image)).toBe(policy));
});

describe('applyV1Defaults', () => {
  it('fills the pod and container defaults', () => {
    const pod = applyV1Defaults(basePod());
    expect(pod.spec).toMatchObject({
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      securityContext: {},
      enableServiceLinks: true,
    });
    const c = pod.spec.containers[0];
    expect(c).toMatchObject({
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });
    expect(c.ports![0].protocol).toBe('TCP');
    expect(c.ports![0].hostPort).toBeUndefined();
    expect(c.livenessProbe).toMatchObject({
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
      httpGet: { path: '/', scheme: 'HTTP' },
    });
    expect(c.env![0].valueFrom!.fieldRef!.apiVersion).toBe('v1');
    expect(c.resources).toEqual({ limits: { cpu: '1', memory: '128Mi' }, requests: { cpu: '500m', memory: '128Mi' } });
    expect(pod.spec.volumes![0]).toEqual({ name: 'scratch', emptyDir: {} });
  });

  it('keeps explicit values and sets hostPort under hostNetwork', () => {
    const pod = basePod();
    pod.spec.restartPolicy = 'Never';
    pod.spec.terminationGracePeriodSeconds = 0;
    pod.spec.hostNetwork = true;
    applyV1Defaults(pod);
    expect(pod.spec.restartPolicy).toBe('Never');
    expect(pod.spec.terminationGracePeriodSeconds).toBe(0);
    expect(pod.spec.containers[0].ports![0].hostPort).toBe(80);
  });
});

describe('applyStaticPodDefaults', () => {
  it('applies upstream common.go defaults for a file pod', () => {
    const pod = applyStaticPodDefaults(basePod(), fileOpts);
    const uid = pod.metadata.uid!;
    expect(uid).toMatch(/^[0-9a-f]{32}$/);
    expect(pod.metadata.name).toBe('web-node-a');
    expect(pod.metadata.namespace).toBe('default');
    expect(pod.spec.nodeName).toBe('Node-A');
    expect(pod.metadata.annotations).toEqual({
      'kubernetes.io/config.hash': uid,
      'kubernetes.io/config.source': 'file',
      'kubernetes.io/config.seen': '2024-01-02T03:04:05.12Z',
    });
    expect(pod.spec.tolerations).toEqual([{ operator: 'Exists', effect: 'NoExecute' }]);
    expect(pod.status?.phase).toBe('Pending');
  });

  it('keeps an explicit uid and namespace; http pods get no toleration', () => {
    const raw = basePod();
    raw.metadata.uid = 'given';
    raw.metadata.namespace = 'kube-system';
    const pod = applyStaticPodDefaults(raw, { ...fileOpts, isFile: false, manifestSource: 'http://x/pods', sourceName: 'http' });
    expect(pod.metadata.uid).toBe('given');
    expect(pod.metadata.annotations!['kubernetes.io/config.hash']).toBe('given');
    expect(pod.metadata.namespace).toBe('kube-system');
    expect(pod.spec.tolerations).toBeUndefined();
  });

  it('does not add the NoExecute toleration twice', () => {
    const raw = basePod();
    raw.spec.tolerations = [{ operator: 'Exists', effect: 'NoExecute' }];
    expect(applyStaticPodDefaults(raw, fileOpts).spec.tolerations).toHaveLength(1);
  });

  it('the fallback hash (for manifests whose upstream UID cannot be reproduced) is stable and varies with node, path and content', () => {
    const a = applyV1Defaults(basePod());
    const b = applyV1Defaults(PodSchema.parse(JSON.parse(canonicalJSON(basePod()))));
    b.spec.restartPolicy = 'Always';
    expect(fallbackStaticPodHash(a, 'p', true, 'n')).toBe(fallbackStaticPodHash(b, 'p', true, 'n'));
    expect(fallbackStaticPodHash(a, 'p', true, 'n')).not.toBe(fallbackStaticPodHash(a, 'p', true, 'm'));
    expect(fallbackStaticPodHash(a, 'p', true, 'n')).not.toBe(fallbackStaticPodHash(a, 'q', true, 'n'));
    expect(fallbackStaticPodHash(a, 'p', true, 'n')).not.toBe(fallbackStaticPodHash(a, 'p', false, 'n'));
    b.spec.containers[0].image = 'nginx:1.26';
    expect(fallbackStaticPodHash(a, 'p', true, 'n')).not.toBe(fallbackStaticPodHash(b, 'p', true, 'n'));
  });

  it('formats RFC3339Nano like Go (trailing zeros trimmed)', () => {
    expect(formatRFC3339Nano(Date.UTC(2024, 0, 1))).toBe('2024-01-01T00:00:00Z');
    expect(formatRFC3339Nano(Date.UTC(2024, 0, 1, 0, 0, 0, 5))).toBe('2024-01-01T00:00:00.005Z');
    expect(formatRFC3339Nano(Date.UTC(2024, 0, 1, 0, 0, 10, 500))).toBe('2024-01-01T00:00:10.5Z');
  });
});
