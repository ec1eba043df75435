import { describe, expect, it } from 'vitest';
import type { Node, NodeCondition } from '../../src/api/cluster.js';
import {
  aggregateMessage,
  nodeStatusChanged,
  setNodeStatus,
  type NodeStatusInputs,
  type NodeStatusMemory,
} from '../../src/main/node/node-status-setters.js';
import type { NodeImage } from '../../src/main/images/image-list-cache.js';
import type { PressureCondition } from '../../src/main/node/pressure.js';
import { nodeStatusPatch } from '../../src/main/node/node-status-patch.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:00:10Z';
const T2 = '2026-01-01T00:00:20Z';
const T3 = '2026-01-01T00:00:30Z';

const CAPACITY = { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' };

const inputs = (over: Partial<NodeStatusInputs> = {}): NodeStatusInputs => ({
  now: T0,
  addresses: [
    { type: 'InternalIP', address: '10.0.0.5' },
    { type: 'Hostname', address: 'node1' },
  ],
  machine: {
    machineID: 'machine-1',
    systemUUID: 'uuid-1',
    bootID: 'boot-1',
    kernelVersion: '6.1.0-18-amd64',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    operatingSystem: 'linux',
    architecture: 'amd64',
    cpuCores: 4,
    memoryBytes: 8n * 1024n ** 3n,
    hugepages: {},
  },
  capacity: CAPACITY,
  allocatable: { ...CAPACITY, memory: '7Gi' },
  containerRuntimeVersion: 'containerd://1.6.20',
  kubeletVersion: 'v1.20.2',
  kubeletPort: 10250,
  images: [{ repoDigests: ['docker.io/library/nginx@sha256:aa'], repoTags: ['docker.io/library/nginx:1.25'], sizeBytes: 70_000_000 }],
  underPressure: () => false,
  readyErrors: [],
  ...over,
});

function run(node: Node, i: NodeStatusInputs, memory: NodeStatusMemory = { lastUnschedulable: false }) {
  const events: string[] = [];
  setNodeStatus(node, i, (type, reason, message) => events.push(`${type} ${reason}${message ? `: ${message}` : ''}`), memory);
  return events;
}

const cond = (node: Node, type: string): NodeCondition => node.status!.conditions!.find((c) => c.type === type)!;
const newNode = (): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node1' } });

describe('setNodeStatus: the setters in upstream order', () => {
  it('first report on a new node: fields, condition order and the Sufficient/NoPressure events', () => {
    const node = newNode();
    const events = run(node, inputs());
    const s = node.status!;
    expect(s.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'node1' },
    ]);
    expect(s.capacity).toEqual(CAPACITY);
    expect(s.allocatable).toEqual({ ...CAPACITY, memory: '7Gi' });
    expect(s.nodeInfo).toEqual({
      machineID: 'machine-1',
      systemUUID: 'uuid-1',
      bootID: 'boot-1',
      kernelVersion: '6.1.0-18-amd64',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntimeVersion: 'containerd://1.6.20',
      kubeletVersion: 'v1.20.2',
      kubeProxyVersion: 'v1.20.2',
      operatingSystem: 'linux',
      architecture: 'amd64',
    });
    // The wire name of DaemonEndpoint.Port is capitalised.
    expect(JSON.parse(JSON.stringify(s.daemonEndpoints))).toEqual({ kubeletEndpoint: { Port: 10250 } });
    expect(s.conditions!.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
      ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
    ]);
    for (const c of s.conditions!) expect([c.lastHeartbeatTime, c.lastTransitionTime]).toEqual([T0, T0]);
    // No NodeReady event: there was no previous Ready condition to transition from.
    expect(events).toEqual(['Normal NodeHasSufficientMemory', 'Normal NodeHasNoDiskPressure', 'Normal NodeHasSufficientPID']);
  });

  it.each<{ name: string; images: NodeImage[]; names: string[][] }>([
    {
      name: 'digests before tags',
      images: [{ repoDigests: ['r/a@sha256:1'], repoTags: ['r/a:1', 'r/a:latest'], sizeBytes: 10 }],
      names: [['r/a@sha256:1', 'r/a:1', 'r/a:latest']],
    },
    {
      name: 'at most 5 names per image',
      images: [{ repoDigests: ['d1', 'd2', 'd3'], repoTags: ['t1', 't2', 't3', 't4'], sizeBytes: 10 }],
      names: [['d1', 'd2', 'd3', 't1', 't2']],
    },
    {
      name: 'the given order (largest first) is kept',
      images: [
        { repoDigests: [], repoTags: ['big:1'], sizeBytes: 300 },
        { repoDigests: ['small@sha256:2'], repoTags: [], sizeBytes: 20 },
      ],
      names: [['big:1'], ['small@sha256:2']],
    },
  ])('images: $name', ({ images, names }) => {
    const node = newNode();
    run(node, inputs({ images }));
    expect(node.status!.images!.map((i) => i.names)).toEqual(names);
    expect(node.status!.images!.map((i) => i.sizeBytes)).toEqual(images.map((i) => i.sizeBytes));
  });

  it('keeps conditions owned by other components', () => {
    const node = newNode();
    const other: NodeCondition = { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', lastTransitionTime: 'x' };
    node.status = { conditions: [other] };
    run(node, inputs());
    expect(node.status.conditions![0]).toEqual(other);
    expect(node.status.conditions!.map((c) => c.type)).toEqual([
      'NetworkUnavailable',
      'MemoryPressure',
      'DiskPressure',
      'PIDPressure',
      'Ready',
    ]);
  });
});

const PRESSURE: {
  type: PressureCondition;
  trueReason: string;
  trueMessage: string;
  trueEvent: string;
  falseReason: string;
  falseEvent: string;
}[] = [
  {
    type: 'MemoryPressure',
    trueReason: 'KubeletHasInsufficientMemory',
    trueMessage: 'kubelet has insufficient memory available',
    trueEvent: 'NodeHasInsufficientMemory',
    falseReason: 'KubeletHasSufficientMemory',
    falseEvent: 'NodeHasSufficientMemory',
  },
  {
    type: 'DiskPressure',
    trueReason: 'KubeletHasDiskPressure',
    trueMessage: 'kubelet has disk pressure',
    trueEvent: 'NodeHasDiskPressure',
    falseReason: 'KubeletHasNoDiskPressure',
    falseEvent: 'NodeHasNoDiskPressure',
  },
  {
    type: 'PIDPressure',
    trueReason: 'KubeletHasInsufficientPID',
    trueMessage: 'kubelet has insufficient PID available',
    trueEvent: 'NodeHasInsufficientPID',
    falseReason: 'KubeletHasSufficientPID',
    falseEvent: 'NodeHasSufficientPID',
  },
];

// Upstream nodestatus MachineInfo: capacity keys the kubelet does not set survive, and reach allocatable.
describe('capacity and allocatable merge into what the node has (upstream MachineInfo)', () => {
  const patched = (capacity: Record<string, string>, allocatable: Record<string, string>): Node => ({
    ...newNode(),
    status: { capacity, allocatable },
  });

  it('an extended resource an operator added to capacity is kept and carried into allocatable', () => {
    const node = patched({ ...CAPACITY, 'example.com/dongle': '4' }, { ...CAPACITY });
    run(node, inputs());
    expect(node.status!.capacity).toEqual({ ...CAPACITY, 'example.com/dongle': '4' });
    expect(node.status!.allocatable).toEqual({ ...CAPACITY, memory: '7Gi', 'example.com/dongle': '4' });
  });

  it('the kubelet’s own keys are overwritten in both; no reservation applies to the others', () => {
    const node = patched({ cpu: '64', 'example.com/dongle': '4' }, { cpu: '1', 'example.com/dongle': '1' });
    run(node, inputs());
    expect(node.status!.capacity!.cpu).toBe('4');
    expect(node.status!.allocatable).toMatchObject({ cpu: '4', 'example.com/dongle': '4' });
  });

  it.each([
    ['an extended resource gone from capacity leaves allocatable', 'example.com/dongle', false],
    ['a native one left alone', 'hugepages-1Gi', true],
    ['a kubernetes.io one left alone', 'kubernetes.io/foo', true],
  ])('allocatable without capacity: %s', (_name, key, kept) => {
    const node = patched({ ...CAPACITY }, { ...CAPACITY, [key]: '2' });
    run(node, inputs());
    expect(key in node.status!.allocatable!).toBe(kept);
  });

  it('the status patch from the node as read keeps the operator’s key (no null for it)', () => {
    const before = patched({ ...CAPACITY, 'example.com/dongle': '4' }, { ...CAPACITY, memory: '7Gi' });
    const after = structuredClone(before);
    run(after, inputs());
    expect(nodeStatusPatch(before.status, after.status!)).toMatchObject({ status: { allocatable: { 'example.com/dongle': '4' } } });
    expect(JSON.stringify(nodeStatusPatch(before.status, after.status!))).not.toContain('null');
  });
});

describe('Rebooted and NodeSchedulable / NodeNotSchedulable events', () => {
  const reported = (bootID: string): Node => ({
    ...newNode(),
    status: { nodeInfo: { bootID } as NonNullable<Node['status']>['nodeInfo'] },
  });
  const rebooted = (events: string[]) => events.filter((e) => e.includes('Rebooted'));

  it('a boot id other than the one the node reported is a Rebooted warning naming the new one (upstream MachineInfo)', () => {
    expect(rebooted(run(reported('boot-0'), inputs()))).toEqual(['Warning Rebooted: Node node1 has been rebooted, boot id: boot-1']);
    expect(rebooted(run(reported('boot-1'), inputs()))).toEqual([]);
    expect(rebooted(run(newNode(), inputs()))).toEqual([]);
  });

  it('spec.unschedulable changes are NodeNotSchedulable / NodeSchedulable, once each (upstream recordNodeSchedulableEvent)', () => {
    const memory = { lastUnschedulable: false };
    const node = newNode();
    const schedulable = (unschedulable: boolean) => {
      node.spec = { unschedulable };
      return run(node, inputs(), memory).filter((e) => e.includes('Schedulable'));
    };
    expect(schedulable(false)).toEqual([]);
    expect(schedulable(true)).toEqual(['Normal NodeNotSchedulable']);
    expect(schedulable(true)).toEqual([]);
    expect(schedulable(false)).toEqual(['Normal NodeSchedulable']);
    expect(memory.lastUnschedulable).toBe(false);
  });
});

describe('pressure conditions', () => {
  it.each(PRESSURE)('$type: events only on transitions, heartbeat always, transition time kept', (p) => {
    const node = newNode();
    const steps: [string, boolean, string, string, string[]][] = [
      // now, under pressure, expected status, expected lastTransitionTime, expected events of this type
      [T0, true, 'True', T0, [p.trueEvent]],
      [T1, true, 'True', T0, []],
      [T2, false, 'False', T2, [p.falseEvent]],
      [T3, false, 'False', T2, []],
    ];
    for (const [now, under, status, transition, expectedEvents] of steps) {
      const events = run(node, inputs({ now, underPressure: (c) => c === p.type && under }));
      const c = cond(node, p.type);
      expect({ now, status: c.status, heartbeat: c.lastHeartbeatTime, transition: c.lastTransitionTime }).toEqual({
        now,
        status,
        heartbeat: now,
        transition,
      });
      expect(c.reason).toBe(status === 'True' ? p.trueReason : p.falseReason);
      if (status === 'True') expect(c.message).toBe(p.trueMessage);
      const mine = events.filter((e) => e === `Normal ${p.trueEvent}` || e === `Normal ${p.falseEvent}`).map((e) => e.slice(7));
      expect(mine).toEqual(expectedEvents);
    }
  });

  it.each(PRESSURE)('$type: an Unknown condition (set by the node controller) turns False with an event', (p) => {
    const node = newNode();
    node.status = {
      conditions: [{ type: p.type, status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: T0, lastHeartbeatTime: T0 }],
    };
    const events = run(node, inputs({ now: T1 }));
    expect(cond(node, p.type)).toMatchObject({ status: 'False', reason: p.falseReason, lastTransitionTime: T1, lastHeartbeatTime: T1 });
    expect(events).toContain(`Normal ${p.falseEvent}`);
  });
});

describe('Ready condition', () => {
  it.each<{ name: string; readyErrors: string[]; capacity?: Record<string, string>; status: string; reason: string; message: string }>([
    { name: 'no errors', readyErrors: [], status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    {
      name: 'one error',
      readyErrors: ['container runtime is down'],
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'container runtime is down',
    },
    {
      name: 'several errors',
      readyErrors: ['container runtime is down', 'PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s'],
      status: 'False',
      reason: 'KubeletNotReady',
      message: '[container runtime is down, PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s]',
    },
    {
      name: 'network not ready',
      readyErrors: ['runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized'],
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized',
    },
    {
      name: 'missing capacities',
      readyErrors: [],
      capacity: { cpu: '4', memory: '8Gi' },
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'missing node capacity for resources: pods, ephemeral-storage',
    },
    {
      name: 'an error and a missing capacity',
      readyErrors: ['container runtime status check may not have completed yet'],
      capacity: { memory: '8Gi', pods: '110', 'ephemeral-storage': '1Gi' },
      status: 'False',
      reason: 'KubeletNotReady',
      message: '[container runtime status check may not have completed yet, missing node capacity for resources: cpu]',
    },
  ])('$name', ({ readyErrors, capacity, status, reason, message }) => {
    const node = newNode();
    run(node, inputs({ readyErrors, ...(capacity ? { capacity } : {}) }));
    expect(cond(node, 'Ready')).toEqual({ type: 'Ready', status, reason, message, lastHeartbeatTime: T0, lastTransitionTime: T0 });
  });

  it('NodeReady / NodeNotReady only on transitions; transition time kept otherwise', () => {
    const node = newNode();
    const steps: [string, string[], string, string, string[]][] = [
      [T0, [], 'True', T0, []],
      [T1, ['container runtime is down'], 'False', T1, ['Normal NodeNotReady']],
      [T2, ['container runtime is down', 'PLEG is not healthy: x'], 'False', T1, []],
      [T3, [], 'True', T3, ['Normal NodeReady']],
    ];
    for (const [now, readyErrors, status, transition, expected] of steps) {
      const events = run(node, inputs({ now, readyErrors }));
      const c = cond(node, 'Ready');
      expect({ now, status: c.status, heartbeat: c.lastHeartbeatTime, transition: c.lastTransitionTime }).toEqual({
        now,
        status,
        heartbeat: now,
        transition,
      });
      expect(events.filter((e) => e.includes('Ready'))).toEqual(expected);
    }
    expect(node.status!.conditions!.filter((c) => c.type === 'Ready')).toHaveLength(1);
  });
});

describe('aggregateMessage (errors.NewAggregate(...).Error())', () => {
  it.each([
    [['a'], 'a'],
    [['a', 'b'], '[a, b]'],
    [['a', 'b', 'c'], '[a, b, c]'],
    // Aggregate.Error() prints each distinct message once.
    [['a', 'a'], 'a'],
    [['a', 'b', 'a'], '[a, b]'],
  ])('%j → %s', (errs, expected) => {
    expect(aggregateMessage(errs)).toBe(expected);
  });
});

describe('nodeStatusChanged (upstream nodeStatusHasChanged)', () => {
  const base = (): NonNullable<Node['status']> => {
    const node = newNode();
    run(node, inputs());
    return JSON.parse(JSON.stringify(node.status)) as NonNullable<Node['status']>;
  };
  type Status = NonNullable<Node['status']>;
  it.each<{ name: string; mutate: (s: Status) => Status; changed: boolean }>([
    { name: 'identical', mutate: (s) => s, changed: false },
    {
      name: 'heartbeat times only',
      mutate: (s) => ({ ...s, conditions: s.conditions!.map((c) => ({ ...c, lastHeartbeatTime: T3 })) }),
      changed: false,
    },
    { name: 'key order', mutate: (s) => Object.fromEntries(Object.entries(s).reverse()), changed: false },
    { name: 'condition order', mutate: (s) => ({ ...s, conditions: [...s.conditions!].reverse() }), changed: false },
    {
      name: 'a transition time',
      mutate: (s) => ({ ...s, conditions: s.conditions!.map((c) => ({ ...c, lastTransitionTime: T3 })) }),
      changed: true,
    },
    {
      name: 'a condition message',
      mutate: (s) => ({ ...s, conditions: s.conditions!.map((c) => ({ ...c, message: 'x' })) }),
      changed: true,
    },
    { name: 'one condition fewer', mutate: (s) => ({ ...s, conditions: s.conditions!.slice(1) }), changed: true },
    { name: 'a capacity value', mutate: (s) => ({ ...s, capacity: { ...s.capacity, memory: '7Gi' } }), changed: true },
    { name: 'address order', mutate: (s) => ({ ...s, addresses: [...s.addresses!].reverse() }), changed: true },
    { name: 'an image', mutate: (s) => ({ ...s, images: [] }), changed: true },
    // apiequality.Semantic compares Quantities by value and treats nil and empty lists alike.
    {
      name: 'the same quantity in another form',
      mutate: (s) => ({ ...s, capacity: { ...s.capacity, memory: '8589934592' } }),
      changed: false,
    },
  ])('$name → $changed', ({ mutate, changed }) => {
    const before = base();
    expect(nodeStatusChanged(before, mutate(base()))).toBe(changed);
  });

  it('a node without images is unchanged on the next sync once the apiserver stored it (empty lists are omitted)', () => {
    const node = newNode();
    run(node, inputs({ images: [] }));
    // The apiserver serialises with omitempty: an empty images list is not sent back.
    const stored = JSON.parse(JSON.stringify(node)) as Node;
    delete stored.status!.images;
    const next = structuredClone(stored);
    run(next, inputs({ images: [], now: T1 }));
    expect(nodeStatusChanged(stored.status, next.status)).toBe(false);
  });
});

describe('status.volumesInUse (upstream VolumesInUse)', () => {
  it('is set from the volume manager, removed when empty, and left as it is while unknown', () => {
    const node = newNode();
    const names = ['kubernetes.io/csi/a.example.com^h1', 'kubernetes.io/csi/b.example.com^h2'];
    run(node, inputs({ volumesInUse: names }));
    expect(node.status!.volumesInUse).toEqual(names);
    run(node, inputs({ now: T1 }));
    expect(node.status!.volumesInUse).toEqual(names);
    run(node, inputs({ now: T2, volumesInUse: [] }));
    expect(node.status!.volumesInUse).toBeUndefined();
  });
});
