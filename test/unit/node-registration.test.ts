import { describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/cluster.js';
import {
  ATTACH_DETACH_ANNOTATION,
  initialNode,
  reconcileExistingNode,
  type RegistrationSpec,
} from '../../src/main/node/node-registration.js';

const spec = (over: Partial<RegistrationSpec> = {}): RegistrationSpec => ({
  nodeName: 'node1',
  hostname: 'node1',
  operatingSystem: 'linux',
  architecture: 'amd64',
  nodeLabels: {},
  taints: [],
  providerID: '',
  ...over,
});

const DEFAULT_LABELS = {
  'kubernetes.io/hostname': 'node1',
  'kubernetes.io/os': 'linux',
  'kubernetes.io/arch': 'amd64',
  'beta.kubernetes.io/os': 'linux',
  'beta.kubernetes.io/arch': 'amd64',
};

describe('initialNode (upstream Kubelet.initialNode)', () => {
  it('default labels, the attach/detach annotation, nothing else in spec', () => {
    const node = initialNode(spec());
    expect(node.metadata).toEqual({ name: 'node1', labels: DEFAULT_LABELS, annotations: { [ATTACH_DETACH_ANNOTATION]: 'true' } });
    expect(node.spec).toEqual({});
    expect([node.apiVersion, node.kind]).toEqual(['v1', 'Node']);
  });

  it.each<{ name: string; over: Partial<RegistrationSpec>; labels?: Record<string, string>; nodeSpec?: Node['spec'] }>([
    {
      name: '--node-labels add labels and override defaults',
      over: { nodeLabels: { 'kubernetes.io/hostname': 'custom', 'node-role.example/worker': '' } },
      labels: { ...DEFAULT_LABELS, 'kubernetes.io/hostname': 'custom', 'node-role.example/worker': '' },
    },
    {
      name: 'hostname label from the hostname, not the node name',
      over: { nodeName: 'node1.example', hostname: 'node1' },
      labels: DEFAULT_LABELS,
    },
    {
      name: 'arm64',
      over: { architecture: 'arm64' },
      labels: { ...DEFAULT_LABELS, 'kubernetes.io/arch': 'arm64', 'beta.kubernetes.io/arch': 'arm64' },
    },
    {
      name: '--register-with-taints',
      over: {
        taints: [
          { key: 'dedicated', value: 'infra', effect: 'NoSchedule' },
          { key: 'example.com/flaky', effect: 'PreferNoSchedule' },
        ],
      },
      nodeSpec: {
        taints: [
          { key: 'dedicated', value: 'infra', effect: 'NoSchedule' },
          { key: 'example.com/flaky', effect: 'PreferNoSchedule' },
        ],
      },
    },
    { name: '--provider-id', over: { providerID: 'kind://docker/kind/node1' }, nodeSpec: { providerID: 'kind://docker/kind/node1' } },
  ])('$name', ({ over, labels, nodeSpec }) => {
    const node = initialNode(spec(over));
    if (labels) expect(node.metadata!.labels).toEqual(labels);
    if (nodeSpec) expect(node.spec).toEqual(nodeSpec);
  });
});

/** The node this kubelet would register, with the status fields reconcile looks at. */
function initial(over: Partial<RegistrationSpec> = {}, capacity: Record<string, string> = { cpu: '4', memory: '8Gi' }): Node {
  const node = initialNode(spec(over));
  node.status = { capacity: { ...capacity }, allocatable: { ...capacity } };
  return node;
}

function existing(mutate: (n: Node) => void): Node {
  const n = structuredClone(initial());
  n.metadata!.uid = 'uid-1';
  n.metadata!.resourceVersion = '42';
  n.metadata!.labels!['node-role.example/worker'] = '';
  mutate(n);
  return n;
}

// Upstream tryRegisterWithAPIServer on AlreadyExists: reconcileCMADAnnotationWithExistingNode,
// updateDefaultLabels (only labels the kubelet sets; "" deletes) and
// reconcileHugePageResource, then one PatchNodeStatus when anything changed.
describe('reconcileExistingNode', () => {
  it.each<{ name: string; init?: Node; mutate: (n: Node) => void; expected: Record<string, unknown> | undefined }>([
    { name: 'already in sync', mutate: () => undefined, expected: undefined },
    {
      name: 'a default label with another value is restored',
      mutate: (n) => void (n.metadata!.labels!['kubernetes.io/hostname'] = 'old-name'),
      expected: { metadata: { labels: { 'kubernetes.io/hostname': 'node1' } } },
    },
    {
      name: 'missing default labels are added',
      mutate: (n) => {
        delete n.metadata!.labels!['kubernetes.io/os'];
        delete n.metadata!.labels!['beta.kubernetes.io/arch'];
      },
      expected: { metadata: { labels: { 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64' } } },
    },
    {
      name: 'a node without labels gets all default labels',
      mutate: (n) => void delete n.metadata!.labels,
      expected: { metadata: { labels: DEFAULT_LABELS } },
    },
    {
      name: 'labels set by others (zone from a cloud controller, roles) are left alone',
      mutate: (n) => {
        n.metadata!.labels!['topology.kubernetes.io/zone'] = 'zone-a';
        n.metadata!.labels!['node.kubernetes.io/instance-type'] = 'm5.large';
        n.metadata!.labels!['node-role.example/worker'] = 'yes';
      },
      expected: undefined,
    },
    {
      name: 'a default label set empty by --node-labels is removed',
      init: initial({ nodeLabels: { 'topology.kubernetes.io/zone': '' } }),
      mutate: (n) => void (n.metadata!.labels!['topology.kubernetes.io/zone'] = 'zone-a'),
      expected: { metadata: { labels: { 'topology.kubernetes.io/zone': null } } },
    },
    {
      name: 'the attach/detach annotation is added',
      mutate: (n) => void delete n.metadata!.annotations,
      expected: { metadata: { annotations: { [ATTACH_DETACH_ANNOTATION]: 'true' } } },
    },
    {
      name: 'the attach/detach annotation is corrected',
      mutate: (n) => void (n.metadata!.annotations![ATTACH_DETACH_ANNOTATION] = 'false'),
      expected: { metadata: { annotations: { [ATTACH_DETACH_ANNOTATION]: 'true' } } },
    },
    {
      name: 'the attach/detach annotation is removed when this kubelet does not set it',
      init: (() => {
        const n = initial();
        delete n.metadata!.annotations![ATTACH_DETACH_ANNOTATION];
        return n;
      })(),
      mutate: () => undefined,
      expected: { metadata: { annotations: { [ATTACH_DETACH_ANNOTATION]: null } } },
    },
    {
      name: 'a huge page size the host no longer has is dropped from capacity and allocatable',
      mutate: (n) => {
        n.status!.capacity!['hugepages-1Gi'] = '2Gi';
        n.status!.allocatable!['hugepages-1Gi'] = '2Gi';
      },
      expected: { status: { capacity: { 'hugepages-1Gi': null }, allocatable: { 'hugepages-1Gi': null } } },
    },
    {
      name: 'a huge page size the host still has is kept',
      init: initial({}, { cpu: '4', memory: '8Gi', 'hugepages-2Mi': '1Gi' }),
      mutate: (n) => {
        n.status!.capacity!['hugepages-2Mi'] = '1Gi';
        n.status!.allocatable!['hugepages-2Mi'] = '1Gi';
      },
      expected: undefined,
    },
    {
      name: 'labels, annotation and huge pages in one patch',
      mutate: (n) => {
        n.metadata!.labels!['kubernetes.io/arch'] = 'arm64';
        delete n.metadata!.annotations;
        n.status!.capacity!['hugepages-2Mi'] = '0';
      },
      expected: {
        metadata: { labels: { 'kubernetes.io/arch': 'amd64' }, annotations: { [ATTACH_DETACH_ANNOTATION]: 'true' } },
        status: { capacity: { 'hugepages-2Mi': null } },
      },
    },
  ])('$name', ({ init, mutate, expected }) => {
    expect(reconcileExistingNode(init ?? initial(), existing(mutate))).toEqual(expected);
  });
});
