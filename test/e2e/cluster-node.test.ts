/**
 * A kubelet-ts node in a real cluster (issue 8): registration, status, lease,
 * events, node lifecycle through the controller-manager, runtime outages and
 * TLS bootstrap, against the real control plane and containerd, observed with
 * kubectl as a user would.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { milliValue, value } from '../../src/api/quantity.js';
import { CriClient } from '../../src/cri/client.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from './agent-harness.js';
import {
  bootstrapKubeconfig,
  condition,
  deleteNodeObjects,
  describeCluster,
  getOrUndefined,
  kubectl,
  kubectlJson,
  nodeKubeconfig,
  type NodeObject,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';
import { PrivateContainerd } from '../helpers/private-containerd.js';

const getNode = (name: string) => getOrUndefined<NodeObject>('node', name);

async function waitForReady(name: string, status: 'True' | 'False' | 'Unknown', timeoutMs: number): Promise<NodeObject> {
  return pollUntil(
    `node ${name} Ready=${status}`,
    async () => {
      const node = await getNode(name);
      return condition(node, 'Ready')?.status === status ? node : undefined;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

describeCluster('a kubelet-ts node in a real cluster', () => {
  const run = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-${run}`;
  let agent: AgentProcess;
  let runtimeVersion = '';

  beforeAll(async () => {
    const cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 30_000 });
    try {
      const v = await cri.version({});
      runtimeVersion = `${v.runtimeName}://${v.runtimeVersion}`;
    } finally {
      cri.close();
    }
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, `e2e-cluster-${run}`, []);
    const kubeconfig = await nodeKubeconfig(nodeName, join(agent.dir, 'kubeconfig'));
    agent.extraArgs.push(
      `--kubeconfig=${kubeconfig}`,
      '--node-labels=kubelet-ts.e2e/role=worker,kubelet-ts.e2e/run=' + run,
      '--register-with-taints=kubelet-ts.e2e/dedicated=e2e:NoSchedule',
      '--system-reserved=memory=100Mi',
      '--kube-reserved=cpu=100m',
    );
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
  });

  it('kubepods is capped at allocatable plus the hard eviction threshold, and the Node shows that allocatable', async () => {
    const node = await waitForReady(nodeName, 'True', 60_000);
    const capacity = value(node.status!.capacity!.memory);
    const allocatable = value(node.status!.allocatable!.memory);
    // Upstream: allocatable = capacity - systemReserved - kubeReserved - evictionHard (memory.available 100Mi by default) ...
    expect(allocatable).toBe(capacity - 200n * 1024n ** 2n);
    expect(milliValue(node.status!.allocatable!.cpu)).toBe(milliValue(node.status!.capacity!.cpu) - 100n);
    // ... and enforceNodeAllocatable [pods] caps kubepods at allocatable plus the eviction threshold (page-rounded).
    const kubepods = (ctrl: string, file: string) =>
      readFileSync(join('/sys/fs/cgroup', ctrl, agent.ownCgroupRoot!, 'kubepods', file), 'utf8').trim();
    expect(BigInt(kubepods('memory', 'memory.limit_in_bytes'))).toBe(((allocatable + 100n * 1024n ** 2n) / 4096n) * 4096n);
    expect(kubepods('cpu', 'cpu.shares')).toBe(String((milliValue(node.status!.allocatable!.cpu) * 1024n) / 1000n));
  });

  it('registers and turns Ready within 10 s, with labels, taints, capacity, allocatable, nodeInfo and addresses', async () => {
    const node = await waitForReady(nodeName, 'True', 60_000);
    const ready = condition(node, 'Ready')!;
    expect(ready.reason).toBe('KubeletReady');
    expect(ready.message).toBe('kubelet is posting ready status');
    const readyAfterMs = Date.parse(ready.lastTransitionTime!) - Date.parse(node.metadata.creationTimestamp);
    expect(readyAfterMs).toBeLessThanOrEqual(10_000);

    expect(node.metadata.labels).toMatchObject({
      'kubernetes.io/hostname': nodeName,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': expect.stringMatching(/^(amd64|arm64)$/) as string,
      'kubelet-ts.e2e/role': 'worker',
      'kubelet-ts.e2e/run': run,
    });
    expect(node.spec?.taints).toContainEqual({ key: 'kubelet-ts.e2e/dedicated', value: 'e2e', effect: 'NoSchedule' });
    for (const r of ['cpu', 'memory', 'pods', 'ephemeral-storage']) {
      expect(node.status?.capacity?.[r], `capacity ${r}`).toBeTruthy();
      expect(node.status?.allocatable?.[r], `allocatable ${r}`).toBeTruthy();
    }
    expect(node.status?.capacity?.pods).toBe('110');
    expect(node.status?.nodeInfo).toMatchObject({
      containerRuntimeVersion: runtimeVersion,
      operatingSystem: 'linux',
      kubeletVersion: expect.stringMatching(/^v1\.20\.2\+kubelet-ts-/) as string,
    });
    expect(node.status?.nodeInfo?.machineID).toMatch(/^[0-9a-f]{32}$/);
    expect(node.status?.nodeInfo?.bootID).toBeTruthy();
    expect(node.status?.addresses?.map((a) => a.type)).toEqual(['InternalIP', 'Hostname']);
    expect(node.status?.addresses?.[1]?.address).toBe(nodeName);
    expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(agent.port);
    // An image with neither tag nor digest (one whose tag moved to a newer image) has names null, as upstream reports it.
    expect(node.status?.images?.some((i) => (i.names ?? []).includes('docker.io/kubelet-ts/busybox:1.0'))).toBe(true);
    for (const [type, reason] of [
      ['MemoryPressure', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'KubeletHasSufficientPID'],
    ]) {
      expect(condition(node, type)).toMatchObject({ status: 'False', reason });
    }
    // What a user sees.
    const wide = await kubectl('get', 'node', nodeName, '-o', 'wide', '--no-headers');
    expect(wide).toMatch(new RegExp(`^${nodeName}\\s+Ready\\s`));
    expect(wide).toContain(runtimeVersion);
  });

  it('renews its lease every ~10 s, owned by the Node', async () => {
    type Lease = {
      metadata: { ownerReferences?: { kind: string; name: string; uid: string }[] };
      spec: { holderIdentity: string; leaseDurationSeconds: number; renewTime: string };
    };
    const renewals: number[] = [];
    let lease: Lease | undefined;
    await pollUntil(
      'three lease renewals',
      async () => {
        lease = await getOrUndefined<Lease>('lease', '-n', 'kube-node-lease', nodeName);
        const t = lease ? Date.parse(lease.spec.renewTime) : undefined;
        if (t !== undefined && renewals.at(-1) !== t) renewals.push(t);
        return renewals.length >= 3;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(lease!.spec.holderIdentity).toBe(nodeName);
    expect(lease!.spec.leaseDurationSeconds).toBe(40);
    const node = await getNode(nodeName);
    expect(lease!.metadata.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: 'Node', name: nodeName, uid: node!.metadata.uid }),
    );
    const gaps = renewals.slice(1).map((t, i) => (t - renewals[i]) / 1000);
    for (const gap of gaps.slice(1)) {
      expect(gap).toBeGreaterThanOrEqual(9);
      expect(gap).toBeLessThanOrEqual(16);
    }
  });

  it('records node events that kubectl shows', async () => {
    // Upstream records NodeReady only when an existing Ready condition changes to True: a node whose first
    // status (at registration) was already Ready never gets one. Expect it when the condition moved later.
    const registered = await getNode(nodeName);
    const readySince = Date.parse(condition(registered, 'Ready')?.lastTransitionTime ?? '');
    const becameReady = readySince - Date.parse(registered!.metadata.creationTimestamp) >= 1000;
    const reasons = await pollUntil(
      'node events',
      async () => {
        const list = await kubectlJson<{ items: { reason: string; source?: { component?: string; host?: string }; count?: number }[] }>(
          'get',
          'events',
          '-n',
          'default',
          '--field-selector',
          `involvedObject.name=${nodeName}`,
        );
        const r = new Set(list.items.map((e) => e.reason));
        const missing = [
          'Starting',
          'NodeHasSufficientMemory',
          'NodeHasNoDiskPressure',
          'NodeHasSufficientPID',
          ...(becameReady ? ['NodeReady'] : []),
          'RegisteredNode',
        ].filter((x) => !r.has(x));
        // Thrown, so that a timeout names what never arrived.
        if (missing.length > 0) throw new Error(`missing ${missing.join(', ')}; have ${[...r].join(', ')}`);
        return list;
      },
      // Generous: on a loaded machine the controller-manager's RegisteredNode and retried writes can take a while.
      { timeoutMs: 150_000, intervalMs: 1000 },
    );
    const starting = reasons.items.find((e) => e.reason === 'Starting')!;
    expect(starting.source).toEqual({ component: 'kubelet', host: nodeName });
    const text = await kubectl('get', 'events', '-n', 'default', '--field-selector', `involvedObject.name=${nodeName}`);
    expect(text).toContain('Starting kubelet.');
  });

  it('is marked Unknown by the controller-manager after a SIGKILL, and Ready again after a restart', async () => {
    await agent.stop('SIGKILL');
    const unknown = await waitForReady(nodeName, 'Unknown', 150_000);
    expect(condition(unknown, 'Ready')?.reason).toBe('NodeStatusUnknown');
    await agent.start();
    await waitForReady(nodeName, 'True', 60_000);
  });
});

describeCluster('a kubelet-ts node whose runtime stops', () => {
  const run = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-rt-${run}`;
  const containerd = new PrivateContainerd(`rt${run.slice(0, 4)}`, 130);
  let agent: AgentProcess;

  beforeAll(async () => {
    await containerd.up();
    agent = new AgentProcess(containerd.endpoint, nodeName, `e2e-rt-${run}`, []);
    agent.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(nodeName, join(agent.dir, 'kubeconfig'))}`);
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
    await containerd.down();
    await deleteNodeObjects(nodeName);
  });

  it('goes NotReady with "container runtime is down" while containerd is stopped, and Ready when it is back', async () => {
    await waitForReady(nodeName, 'True', 60_000);
    containerd.stop();
    const down = await waitForReady(nodeName, 'False', 120_000);
    expect(condition(down, 'Ready')).toMatchObject({ reason: 'KubeletNotReady', message: 'container runtime is down' });
    await containerd.up();
    await waitForReady(nodeName, 'True', 90_000);
    const events = await kubectlJson<{ items: { reason: string }[] }>(
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      `involvedObject.name=${nodeName}`,
    );
    expect(events.items.map((e) => e.reason)).toEqual(expect.arrayContaining(['NodeNotReady', 'NodeReady']));
  });
});

describeCluster('TLS bootstrap', () => {
  const run = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-boot-${run}`;
  let agent: AgentProcess;

  const csrsOfNode = async () =>
    (
      await kubectlJson<{
        items: {
          metadata: { name: string };
          spec: { username: string; signerName: string };
          status?: { conditions?: { type: string }[] };
        }[];
      }>('get', 'csr')
    ).items.filter((c) => c.spec.username === 'system:bootstrap:ktsboo' && c.metadata.name.startsWith('node-csr-'));

  afterAll(async () => {
    await agent?.cleanup();
    await deleteNodeObjects(nodeName);
  });

  it('gets a client certificate through a CSR, registers, and reuses the certificate after a restart', async () => {
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, `e2e-boot-${run}`, []);
    const kubeconfig = join(agent.dir, 'kubelet.kubeconfig');
    const certDir = join(agent.dir, 'pki');
    agent.extraArgs.push(
      `--bootstrap-kubeconfig=${await bootstrapKubeconfig(join(agent.dir, 'bootstrap.kubeconfig'))}`,
      `--kubeconfig=${kubeconfig}`,
      `--cert-dir=${certDir}`,
    );
    const before = new Set((await csrsOfNode()).map((c) => c.metadata.name));
    await agent.start();
    await waitForReady(nodeName, 'True', 120_000);
    const mine = (await csrsOfNode()).filter((c) => !before.has(c.metadata.name));
    expect(mine).toHaveLength(1);
    expect(mine[0].spec.signerName).toBe('kubernetes.io/kube-apiserver-client-kubelet');
    expect(mine[0].status?.conditions?.map((c) => c.type)).toContain('Approved');
    expect(existsSync(join(certDir, 'kubelet-client-current.pem'))).toBe(true);
    expect(readFileSync(kubeconfig, 'utf8')).toContain(join(certDir, 'kubelet-client-current.pem'));

    await agent.stop();
    await agent.start();
    await waitForReady(nodeName, 'True', 60_000);
    expect((await csrsOfNode()).filter((c) => !before.has(c.metadata.name))).toHaveLength(1);
    for (const c of mine) await kubectl('delete', 'csr', c.metadata.name, '--ignore-not-found');
  });
});
