/**
 * What the node status carries and the events it records, as upstream's kubelet (issue 32), against the real
 * control plane:
 * - an extended resource an operator patches onto the node's capacity survives the node status updates,
 *   appears in allocatable, and a pod requesting it schedules and runs;
 * - a boot id other than the one the node last reported is a Rebooted event; `kubectl cordon` / `uncordon`
 *   are NodeNotSchedulable / NodeSchedulable events;
 * - a pod CIDR set on the node reaches the runtime through CRI UpdateRuntimeConfig: a containerd whose CNI
 *   configuration is a template renders it (its CRI status shows the CIDR, its network turns ready, and pods
 *   get addresses from it), and the simulated runtime records it.
 */
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { pollUntil } from '../helpers/poll.js';
import { PrivateContainerd } from '../helpers/private-containerd.js';
import { AgentProcess } from './agent-harness.js';
import {
  condition,
  deleteNodeObjects,
  describeCluster,
  getOrUndefined,
  kubectl,
  kubectlApply,
  kubectlJson,
  nodeKubeconfig,
  startClusterAgent,
  type NodeObject,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';
const getNode = (name: string) => getOrUndefined<NodeObject>('node', name);

/** The node's events (namespace default) by reason, with their messages. */
async function nodeEvents(node: string): Promise<{ reason: string; message: string }[]> {
  const list = await kubectlJson<{ items: { reason: string; message: string }[] }>(
    '-n',
    'default',
    'get',
    'events',
    '--field-selector',
    `involvedObject.kind=Node,involvedObject.name=${node}`,
  );
  return list.items;
}

/** The IPAM subnets of the networks in containerd's verbose CRI status (`cniconfig`: go-cni's config, each network's source text). */
function cniSubnets(cniconfig: string | undefined): string[] | undefined {
  type Conflist = { plugins?: { ipam?: { ranges?: { subnet: string }[][] } }[] };
  const networks = (JSON.parse(cniconfig ?? '{}') as { Networks?: { Config?: { Source?: string } }[] }).Networks ?? [];
  const subnets = networks.flatMap((n) =>
    ((JSON.parse(n.Config?.Source ?? '{}') as Conflist).plugins ?? []).flatMap((p) => (p.ipam?.ranges ?? []).flat().map((r) => r.subnet)),
  );
  return subnets.length > 0 ? subnets : undefined;
}

describeCluster('node status and node events as upstream reports them', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-nu-${id}`;
  const ns = `kts-e2e-nu-${id}`;
  let agent: AgentProcess;
  const patchNodeStatus = (status: object) =>
    kubectl('patch', 'node', nodeName, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status }));

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, []);
    // Report the status at every update (5 s), so that 60 s are a dozen node status writes. The report
    // frequency has no flag; the flags keep the authentication and authorization a config file would change.
    const config = join(agent.dir, 'kubelet-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        nodeStatusUpdateFrequency: '5s',
        nodeStatusReportFrequency: '5s',
      }),
    );
    agent.extraArgs.push(
      `--config=${config}`,
      '--anonymous-auth=true',
      '--authentication-token-webhook=false',
      '--authorization-mode=AlwaysAllow',
    );
    await startClusterAgent(agent);
  });

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
  });

  it('an extended resource patched onto capacity survives 60 s of status updates, reaches allocatable, and a pod requesting it runs', async () => {
    await patchNodeStatus({ capacity: { 'example.com/dongle': '4' } });
    await pollUntil(
      'the dongles in allocatable',
      async () => (await getNode(nodeName))?.status?.allocatable?.['example.com/dongle'] === '4',
      {
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    );
    const heartbeats = new Set<string>();
    const first = Date.now();
    await pollUntil(
      '60 s of node status updates',
      async () => {
        const node = await getNode(nodeName);
        expect(node?.status?.capacity?.['example.com/dongle'], 'capacity').toBe('4');
        expect(node?.status?.allocatable?.['example.com/dongle'], 'allocatable').toBe('4');
        const beat = condition(node, 'Ready')?.lastHeartbeatTime;
        if (beat) heartbeats.add(beat);
        return heartbeats.size >= 12 && Date.now() - first >= 60_000;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    await kubectlApply(ns, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'dongle-user' },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': nodeName },
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: 'app',
            image: IMAGE,
            command: ['sleep', '3600'],
            resources: { requests: { 'example.com/dongle': '1' }, limits: { 'example.com/dongle': '1' } },
          },
        ],
      },
    });
    const running = await agent.until('the dongle pod to run on the node', async () => {
      const p = await getOrUndefined<{ spec: { nodeName?: string }; status?: { phase?: string } }>('pod', '-n', ns, 'dongle-user');
      return p?.status?.phase === 'Running' && p;
    });
    expect(running.spec.nodeName).toBe(nodeName);
    console.log(`dongles kept through ${heartbeats.size} node status updates`);
  });

  it('a boot id other than the one the node reported is a Rebooted event, and the status gets the current one', async () => {
    const bootID = (await getNode(nodeName))!.status!.nodeInfo!.bootID;
    await patchNodeStatus({ nodeInfo: { bootID: 'the-previous-boot' } });
    const event = await pollUntil('a Rebooted event', async () => (await nodeEvents(nodeName)).find((e) => e.reason === 'Rebooted'), {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    expect(event.message).toBe(`Node ${nodeName} has been rebooted, boot id: ${bootID}`);
    await pollUntil('the current boot id back in the status', async () => (await getNode(nodeName))?.status?.nodeInfo?.bootID === bootID, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
  });

  it('kubectl cordon and uncordon are NodeNotSchedulable and NodeSchedulable events', async () => {
    const schedulable = async () => (await nodeEvents(nodeName)).filter((e) => /^Node(Not)?Schedulable$/.test(e.reason));
    expect(await schedulable()).toEqual([]);
    await kubectl('cordon', nodeName);
    const notSchedulable = await pollUntil(
      'a NodeNotSchedulable event',
      async () => (await schedulable()).find((e) => e.reason === 'NodeNotSchedulable'),
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(notSchedulable.message).toBe(`Node ${nodeName} status is now: NodeNotSchedulable`);
    await kubectl('uncordon', nodeName);
    const back = await pollUntil('a NodeSchedulable event', async () => (await schedulable()).find((e) => e.reason === 'NodeSchedulable'), {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    expect(back.message).toBe(`Node ${nodeName} status is now: NodeSchedulable`);
  });
});

describeCluster('the node pod CIDR reaches the runtime (CRI UpdateRuntimeConfig)', () => {
  const id = randomUUID().slice(0, 6);
  const ns = `kts-e2e-cidr-${id}`;
  const agents: AgentProcess[] = [];
  const nodes: string[] = [];
  // A containerd of this test's own whose CNI configuration is a template, rendered with the pod CIDR.
  const containerd = new PrivateContainerd(`cidr${id.slice(0, 4)}`, 79, { confTemplate: true });

  /** Starts an agent on `endpoint` registered as a node, without waiting for Ready (its network may not be). */
  async function startNode(endpoint: string, nodeName: string): Promise<AgentProcess> {
    const agent = new AgentProcess(endpoint, nodeName, ns, []);
    agents.push(agent);
    nodes.push(nodeName);
    agent.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(nodeName, join(agent.dir, 'kubeconfig'))}`);
    await agent.start();
    await pollUntil('the node to register', async () => (await getNode(nodeName)) !== undefined, { timeoutMs: 60_000, intervalMs: 500 });
    return agent;
  }
  const setPodCIDR = (node: string, cidr: string) =>
    kubectl('patch', 'node', node, '--type=merge', '-p', JSON.stringify({ spec: { podCIDR: cidr, podCIDRs: [cidr] } }));

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
  });

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    for (const a of agents) {
      if (a.endpoint !== 'sim') await a.cleanup();
      else {
        await a.stop(); // the embedded sim stops with its agent, and its pods with it
        rmSync(a.dir, { recursive: true, force: true });
      }
    }
    await containerd.down().catch(() => undefined);
    for (const n of nodes) await deleteNodeObjects(n);
  });

  describe('on containerd with a CNI conf_template', () => {
    it('its network turns ready with the CIDR, its CRI status shows it, the node turns Ready, pods get addresses from it', async () => {
      const endpoint = await containerd.up();
      const nodeName = `kts-e2e-cidr-${id}`;
      await startNode(endpoint, nodeName);
      const notReady = await pollUntil(
        'NotReady for the network',
        async () => {
          const ready = condition(await getNode(nodeName), 'Ready');
          return ready?.status === 'False' && /network/i.test(ready.message ?? '') && ready;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(notReady.message).toContain('NetworkReady=false');

      const cidr = '10.79.3.0/24';
      await setPodCIDR(nodeName, cidr);
      const cri = new CriClient({ runtimeEndpoint: endpoint, timeoutMs: 30_000 });
      try {
        const subnets = await pollUntil(
          'containerd to render its CNI configuration with the CIDR',
          async () => {
            const s = await cri.status({ verbose: true });
            const network = s.status?.conditions.find((c) => c.type === 'NetworkReady');
            return network?.status === true && cniSubnets(s.info['cniconfig']);
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        expect(subnets).toEqual([cidr]);
      } finally {
        cri.close();
      }
      await pollUntil('the node to turn Ready', async () => condition(await getNode(nodeName), 'Ready')?.status === 'True', {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      await kubectlApply(ns, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'on-cidr' },
        spec: { nodeName, terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image: IMAGE, command: ['sleep', '3600'] }] },
      });
      const ip = await pollUntil(
        'the pod to run with an address',
        async () => {
          const p = await getOrUndefined<{ status?: { phase?: string; podIP?: string } }>('pod', '-n', ns, 'on-cidr');
          return p?.status?.phase === 'Running' && p.status.podIP;
        },
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      expect(ip).toMatch(/^10\.79\.3\.\d+$/);
    });
  });

  describe('on the simulated runtime', () => {
    it('records the node pod CIDR', async () => {
      const nodeName = `kts-e2e-cidrsim-${id}`;
      const agent = await startNode('sim', nodeName);
      await pollUntil('the node to be Ready', async () => condition(await getNode(nodeName), 'Ready')?.status === 'True', {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      await setPodCIDR(nodeName, '10.79.4.0/24');
      const cri = new CriClient({ runtimeEndpoint: `unix://${join(agent.dir, 'root/sim/cri.sock')}`, timeoutMs: 30_000 });
      try {
        const recorded = await pollUntil(
          'the sim to record the pod CIDR',
          async () => {
            const config = JSON.parse((await cri.status({ verbose: true })).info['config'] ?? '{}') as { podCidr?: string };
            return config.podCidr || undefined;
          },
          { timeoutMs: 30_000, intervalMs: 500 },
        );
        expect(recorded).toBe('10.79.4.0/24');
      } finally {
        cri.close();
      }
    });
  });
});
