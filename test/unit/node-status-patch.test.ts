import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../../src/api/cluster.js';
import { nodeStatusPatch } from '../../src/main/node/node-status-patch.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:00:10Z';

const condition = (type: string, status = 'False', at = T0) => ({
  type,
  status,
  reason: `${type}Reason`,
  message: `${type} message`,
  lastHeartbeatTime: at,
  lastTransitionTime: T0,
});

const base = (): NodeStatus => ({
  capacity: { cpu: '4', memory: '8Gi', pods: '110', 'hugepages-2Mi': '0' },
  allocatable: { cpu: '4', memory: '7Gi', pods: '110', 'hugepages-2Mi': '0' },
  conditions: [condition('MemoryPressure'), condition('DiskPressure'), condition('PIDPressure'), condition('Ready', 'True')],
  addresses: [
    { type: 'InternalIP', address: '10.0.0.5' },
    { type: 'Hostname', address: 'node1' },
  ],
  daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
  nodeInfo: {
    machineID: 'm',
    systemUUID: 'u',
    bootID: 'b1',
    kernelVersion: 'k',
    osImage: 'o',
    containerRuntimeVersion: 'containerd://1.6.20',
    kubeletVersion: 'v1.20.2',
    kubeProxyVersion: 'v1.20.2',
    operatingSystem: 'linux',
    architecture: 'amd64',
  },
  images: [{ names: ['a:1'], sizeBytes: 10 }],
});

const ORDER = [{ type: 'MemoryPressure' }, { type: 'DiskPressure' }, { type: 'PIDPressure' }, { type: 'Ready' }];

// Expected patches follow the core/v1 NodeStatus patch strategies: conditions
// merge by type (with $setElementOrder), addresses are replaced as a whole by the
// kubelet (PatchNodeStatus' fixupPatchForNodeStatusAddresses), images have no
// strategy (atomic), maps and structs merge key by key, null deletes.
describe('nodeStatusPatch', () => {
  it.each<{ name: string; mutate: (s: NodeStatus) => void; expected: Record<string, unknown> | undefined }>([
    { name: 'nothing changed', mutate: () => undefined, expected: undefined },
    {
      name: 'one condition heartbeat',
      mutate: (s) => void (s.conditions![3].lastHeartbeatTime = T1),
      expected: { conditions: [{ type: 'Ready', lastHeartbeatTime: T1 }], '$setElementOrder/conditions': ORDER },
    },
    {
      name: 'two conditions change; the others are not sent',
      mutate: (s) => {
        Object.assign(s.conditions![0], { status: 'True', lastTransitionTime: T1 });
        s.conditions![3].message = 'new';
      },
      expected: {
        conditions: [
          { type: 'MemoryPressure', status: 'True', lastTransitionTime: T1 },
          { type: 'Ready', message: 'new' },
        ],
        '$setElementOrder/conditions': ORDER,
      },
    },
    {
      name: 'a condition added by the kubelet',
      mutate: (s) => void s.conditions!.splice(3, 0, condition('NetworkUnavailable')),
      expected: {
        conditions: [{ type: 'NetworkUnavailable', status: 'False' }],
        '$setElementOrder/conditions': [...ORDER.slice(0, 3), { type: 'NetworkUnavailable' }, ORDER[3]],
      },
    },
    {
      name: 'addresses replaced as a whole',
      mutate: (s) => void (s.addresses = [{ type: 'InternalIP', address: '10.0.0.6' }, ...s.addresses!.slice(1)]),
      expected: {
        addresses: [{ type: 'InternalIP', address: '10.0.0.6' }, { type: 'Hostname', address: 'node1' }, { $patch: 'replace' }],
      },
    },
    {
      name: 'images are atomic',
      mutate: (s) => void s.images!.push({ names: ['b:1'], sizeBytes: 5 }),
      expected: {
        images: [
          { names: ['a:1'], sizeBytes: 10 },
          { names: ['b:1'], sizeBytes: 5 },
        ],
      },
    },
    {
      name: 'one capacity value',
      mutate: (s) => void (s.capacity!.memory = '16Gi'),
      expected: { capacity: { memory: '16Gi' } },
    },
    {
      name: 'a removed map key becomes null',
      mutate: (s) => {
        delete s.capacity!['hugepages-2Mi'];
        delete s.allocatable!['hugepages-2Mi'];
      },
      expected: { capacity: { 'hugepages-2Mi': null }, allocatable: { 'hugepages-2Mi': null } },
    },
    {
      name: 'a nested struct sends only the changed field',
      mutate: (s) => void (s.nodeInfo!.bootID = 'b2'),
      expected: { nodeInfo: { bootID: 'b2' } },
    },
    {
      name: 'a field two levels down',
      mutate: (s) => void (s.daemonEndpoints!.kubeletEndpoint!.Port = 10251),
      expected: { daemonEndpoints: { kubeletEndpoint: { Port: 10251 } } },
    },
    {
      name: 'a removed top-level field becomes null',
      mutate: (s) => void delete s.images,
      expected: { images: null },
    },
    // Go's omitempty: an empty list and a missing one serialise alike, so there is no change to send.
    { name: 'an empty list where none was', mutate: (s) => void (s.volumesInUse = []), expected: undefined },
  ])('$name', ({ mutate, expected }) => {
    const before = base();
    const after = base();
    mutate(after);
    const patch = nodeStatusPatch(before, after);
    if (expected === undefined) {
      expect(patch).toBeUndefined();
      return;
    }
    const status = (patch as { status: Record<string, unknown> }).status;
    expect(Object.keys(status).sort()).toEqual(Object.keys(expected).sort());
    // Fields beyond the changed ones may be sent (whole list elements), never fewer.
    expect(status).toMatchObject(expected);
  });

  it('a patch built from no previous status sends everything', () => {
    const after = base();
    const patch = nodeStatusPatch(undefined, after) as { status: Record<string, unknown> };
    expect(patch.status).toMatchObject({ capacity: after.capacity, nodeInfo: after.nodeInfo, images: after.images });
    expect(patch.status.conditions).toEqual(after.conditions);
  });
});
