import { describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/cluster.js';
import { silentLogger } from '../../src/common/logger.js';
import type { RestClient } from '../../src/main/apiserver/rest-client.js';
import { NodeStatusManager } from '../../src/main/node/node-status-manager.js';
import type { NodeStatusInputs } from '../../src/main/node/node-status-setters.js';
import { PodCidr } from '../../src/main/node/pod-cidr.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { applyStrategicPatch } from '../fakes/strategic-merge.js';

/** A CRI that records the pod CIDRs of UpdateRuntimeConfig calls. */
function fakeCri() {
  const calls: string[] = [];
  return {
    calls,
    cri: {
      updateRuntimeConfig: async (req?: { runtimeConfig?: { networkConfig?: { podCidr?: string } } }) => {
        calls.push(req?.runtimeConfig?.networkConfig?.podCidr ?? '');
        return {};
      },
    },
  };
}

// Upstream tryUpdateNodeStatus: node.spec.podCIDRs reach the runtime at each update; a change is reported.
describe('node status updates pass node.spec.podCIDRs to the runtime', () => {
  const CAPACITY = { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' };
  const inputs = (now: number): NodeStatusInputs => ({
    now: new Date(now).toISOString(),
    addresses: [{ type: 'Hostname', address: 'node1' }],
    machine: {
      machineID: 'm',
      systemUUID: 'u',
      bootID: 'b',
      kernelVersion: 'k',
      osImage: 'o',
      operatingSystem: 'linux',
      architecture: 'amd64',
      cpuCores: 4,
      memoryBytes: 8n * 1024n ** 3n,
      hugepages: {},
    },
    capacity: CAPACITY,
    allocatable: CAPACITY,
    containerRuntimeVersion: 'containerd://1.6.20',
    kubeletVersion: 'v1.20.2',
    kubeletPort: 10250,
    images: [],
    underPressure: () => false,
    readyErrors: [],
  });

  function setup() {
    let node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node1' }, spec: {}, status: { addresses: [] } };
    const patches: unknown[] = [];
    const heartbeat = {
      get: async () => structuredClone(node),
      patch: async (_path: string, body: Record<string, unknown>) => {
        patches.push(body);
        node = applyStrategicPatch(node, body, { 'status.conditions': 'type', 'status.addresses': 'type' });
        return structuredClone(node);
      },
    } as unknown as RestClient;
    const f = fakeCri();
    const clock = new FakeClock();
    const manager = new NodeStatusManager({
      main: heartbeat,
      heartbeat,
      nodeName: 'node1',
      registerNode: false,
      registration: {
        nodeName: 'node1',
        hostname: 'node1',
        operatingSystem: 'linux',
        architecture: 'amd64',
        nodeLabels: {},
        taints: [],
        providerID: '',
      },
      updateFrequencyMs: 10_000,
      reportFrequencyMs: 300_000,
      collect: async () => inputs(clock.now()),
      runtimeReady: () => true,
      podCidr: new PodCidr(f.cri, silentLogger()),
      recorder: { record: () => undefined },
      clock,
      logger: silentLogger(),
    });
    const setSpec = (spec: Node['spec']) => (node = { ...node, spec });
    const sync = async () => {
      clock.step(10_000);
      await manager.syncNodeStatus();
    };
    return { sync, patches, calls: f.calls, setSpec };
  }

  it('a pod CIDR set on the node reaches the runtime at the next update, once, and that update is reported', async () => {
    const t = setup();
    await t.sync();
    await t.sync();
    expect(t.patches).toHaveLength(1); // the first report; then only heartbeats changed
    expect(t.calls).toEqual([]);
    t.setSpec({ podCIDR: '10.77.0.0/24', podCIDRs: ['10.77.0.0/24'] });
    await t.sync();
    expect(t.calls).toEqual(['10.77.0.0/24']);
    expect(t.patches).toHaveLength(2); // reported though only heartbeats changed
    await t.sync();
    expect(t.calls).toEqual(['10.77.0.0/24']);
    expect(t.patches).toHaveLength(2);
  });
});
