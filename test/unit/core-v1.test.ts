import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ConfigMap, Event, Lease, Node, ObjectMeta, ObjectReference, Secret } from '../../src/api/core-v1.js';
import { decodes } from '../../src/api/decodes.js';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { validatePod } from '../../src/main/podconfig/validation.js';

// The one Pod model (src/api/core-v1.ts) is client-node's, in wire form; the
// zod decoder of untrusted manifests must produce it.

describe('decodes (compile-time tie between a decoder and the model)', () => {
  it('accepts a schema whose output is the model type and returns it unchanged', () => {
    const schema = z.looseObject({ name: z.string().optional(), creationTimestamp: z.string().nullish() });
    expect(decodes<ObjectMeta>()(schema)).toBe(schema);
  });

  it('rejects, at compile time, a schema that types a field differently from the model', () => {
    // `npm run typecheck` fails if this line compiles, that is if the check stops checking.
    // @ts-expect-error name is a string in V1ObjectMeta
    const schema = decodes<ObjectMeta>()(z.looseObject({ name: z.number() }));
    expect(schema.safeParse({ name: 1 }).success).toBe(true);
  });
});

describe('client-node round trip', () => {
  const wire = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u1', creationTimestamp: '2024-05-01T10:00:00.000Z' },
    spec: { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80 }] }] },
    status: {
      phase: 'Running',
      startTime: '2024-05-01T10:00:01.000Z',
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          restartCount: 1,
          image: 'busybox',
          imageID: '',
          state: { running: { startedAt: '2024-05-01T10:00:02.000Z' } },
          lastState: { terminated: { exitCode: 1, startedAt: null, finishedAt: '2024-05-01T10:00:01.500Z' } },
        },
      ],
    },
  };

  it('client-node deserializes timestamps to Date and serializes back to the same wire form, zero time as null', () => {
    const model = ObjectSerializer.deserialize(wire, 'V1Pod') as { metadata: { creationTimestamp: unknown } };
    expect(model.metadata.creationTimestamp).toBeInstanceOf(Date);
    expect(ObjectSerializer.serialize(model, 'V1Pod')).toEqual(wire);
  });

  it('the manifest decoder accepts that wire form unchanged', () => {
    const pod: Pod = PodSchema.parse(wire);
    expect(pod).toEqual(wire);
  });
});

describe('the other core/v1 types are client-node wire form', () => {
  // Each sample is typed as the project type (a compile-time check of the Wire
  // mapping) and must survive client-node's deserialize/serialize unchanged.
  const ref: ObjectReference = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1' };
  const node: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node1', labels: { 'kubernetes.io/hostname': 'node1' } },
    status: {
      capacity: { cpu: '2', memory: '24Gi', pods: '110' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          lastHeartbeatTime: '2024-05-01T10:00:00.000Z',
          lastTransitionTime: '2024-05-01T09:00:00.000Z',
        },
      ],
      nodeInfo: {
        architecture: 'amd64',
        bootID: 'b',
        containerRuntimeVersion: 'containerd://1.6.20',
        kernelVersion: '6',
        kubeProxyVersion: '',
        kubeletVersion: 'v1.20.2',
        machineID: 'm',
        operatingSystem: 'linux',
        osImage: 'Debian',
        systemUUID: 's',
      },
    },
  };
  const lease: Lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'node1', namespace: 'kube-node-lease' },
    spec: { holderIdentity: 'node1', leaseDurationSeconds: 40, renewTime: '2024-05-01T10:00:00.123Z' },
  };
  const event: Event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web.2', namespace: 'default' },
    involvedObject: ref,
    reason: 'Started',
    message: 'Started container c',
    firstTimestamp: '2024-05-01T10:00:00.000Z',
    lastTimestamp: '2024-05-01T10:00:00.000Z',
    count: 1,
    source: { component: 'kubelet', host: 'node1' },
    type: 'Normal',
  };
  const configMap: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, data: { k: 'v' } };
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'default' },
    data: { k: 'dg==' },
    type: 'Opaque',
  };

  it.each([
    ['V1ObjectReference', ref],
    ['V1Node', node],
    ['V1Lease', lease],
    ['CoreV1Event', event],
    ['V1ConfigMap', configMap],
    ['V1Secret', secret],
  ] as const)('%s', (type, wire) => {
    expect(ObjectSerializer.serialize(ObjectSerializer.deserialize(wire, type), type)).toEqual(wire);
  });
});

describe('PodSchema decode rules', () => {
  const cases: { name: string; input: unknown; check: (pod: Pod) => void }[] = [
    {
      name: 'a zero metav1.Time stays null',
      input: { metadata: { name: 'a', creationTimestamp: null }, spec: { containers: [{ name: 'c' }] } },
      check: (pod) => expect(pod.metadata.creationTimestamp).toBeNull(),
    },
    {
      name: 'a null pointer field decodes to absent',
      input: { metadata: { name: 'a' }, spec: { terminationGracePeriodSeconds: null, containers: [{ name: 'c' }] } },
      check: (pod) => expect(pod.spec.terminationGracePeriodSeconds).toBeUndefined(),
    },
    {
      name: 'absent metadata and spec decode to empty objects with no containers, which validation rejects',
      input: {},
      check: (pod) => {
        expect(pod.metadata).toEqual({});
        expect(pod.spec.containers).toEqual([]);
        expect(validatePod(pod)).toContainEqual({ type: 'Required value', field: 'spec.containers' });
      },
    },
    {
      name: 'each decode gets its own containers array',
      input: {},
      check: (pod) => {
        pod.spec.containers.push({ name: 'mutated' });
        expect(PodSchema.parse({}).spec.containers).toEqual([]);
      },
    },
  ];
  it.each(cases)('$name', ({ input, check }) => check(PodSchema.parse(input)));

  it('rejects an owner reference without its required fields', () => {
    const r = PodSchema.safeParse({ metadata: { ownerReferences: [{ kind: 'Node' }] }, spec: { containers: [{ name: 'c' }] } });
    expect(r.success).toBe(false);
  });
});
