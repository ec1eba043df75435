/**
 * Memory pressure eviction on a kubelet-ts node (eviction/): evictionHard
 * memory.available is set 300 MiB under what is available when the test
 * starts (the agent itself takes about half of that margin), so a BestEffort
 * pod that fills a 400 MiB memory-backed emptyDir (tmpfs pages are charged to
 * its memory cgroup, and count in the working set) crosses it. That pod is
 * evicted while a Guaranteed pod stays, and a BestEffort pod created while
 * the node reports MemoryPressure is refused with upstream's reason.
 * The figures are the whole machine's, shared with whatever else runs here;
 * the margins (240 MiB on each side) keep them apart from ordinary noise.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentProcess } from './agent-harness.js';
import {
  applyNodePod,
  condition,
  describeCluster,
  getOrUndefined,
  kubectl,
  removeClusterTest,
  startClusterAgent,
  waitPodFailed,
  type ClusterPod,
  type NodeObject,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

const IMAGE = 'docker.io/kubelet-ts/busybox:1.0';
const MI = 1024 * 1024;

/** The agent's memory.available: MemTotal − (root cgroup usage − total_inactive_file), as host-probe.ts reads it. */
function memoryAvailable(): number {
  const total = Number(/^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024;
  const usage = Number(readFileSync('/sys/fs/cgroup/memory/memory.usage_in_bytes', 'utf8'));
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(readFileSync('/sys/fs/cgroup/memory/memory.stat', 'utf8'))![1]);
  return total - (usage - inactive);
}

describeCluster('memory pressure eviction on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-evm-${id}`;
  const ns = `kts-e2e-evm-${id}`;
  let agent: AgentProcess | undefined;

  const pod = (name: string) => getOrUndefined<ClusterPod>('pod', '-n', ns, name);
  const node = () => getOrUndefined<NodeObject>('node', nodeName);
  const create = (name: string, container: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    applyNodePod(ns, nodeName, name, { containers: [{ name: 'app', image: IMAGE, ...container }], ...extra });

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    const threshold = Math.floor(memoryAvailable() / MI) - 300;
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, [
      `--eviction-hard=memory.available<${threshold}Mi`,
      '--eviction-pressure-transition-period=30s',
      '--node-status-update-frequency=2s',
    ]);
    await startClusterAgent(agent);
  }, 120_000);

  afterAll(() => removeClusterTest(ns, agent, nodeName), 120_000);

  it('evicts the BestEffort pod over its request, keeps the Guaranteed one, refuses BestEffort pods meanwhile', async () => {
    const a = agent!;
    await create('guaranteed', {
      command: ['sh', '-c', 'sleep 3600'],
      resources: { limits: { cpu: '100m', memory: '32Mi' }, requests: { cpu: '100m', memory: '32Mi' } },
    });
    await a.until('the Guaranteed pod running', async () => (await pod('guaranteed'))?.status?.phase === 'Running');
    expect(condition(await node(), 'MemoryPressure')?.status).toBe('False');

    await create(
      'hog',
      {
        command: ['sh', '-c', 'echo allocating; dd if=/dev/zero of=/mem/fill bs=1M count=400; echo held; sleep 3600'],
        volumeMounts: [{ name: 'mem', mountPath: '/mem' }],
      },
      { volumes: [{ name: 'mem', emptyDir: { medium: 'Memory' } }] },
    );
    const evicted = await waitPodFailed(a, ns, 'hog', 'the BestEffort pod evicted');
    expect(evicted.status?.reason).toBe('Evicted');
    expect(evicted.status?.message).toMatch(
      /^The node was low on resource: memory\. Container app was using \d+(Ki|Mi), which exceeds its request of 0\. $/,
    );
    expect(condition(await node(), 'MemoryPressure')?.status).toBe('True');

    // Within the transition period the node still reports MemoryPressure: BestEffort pods are refused.
    await create('late', { command: ['sh', '-c', 'sleep 3600'] });
    const refused = await waitPodFailed(a, ns, 'late', 'the late BestEffort pod refused', 90_000);
    // rejectPod prefixes the admit handler's message, as upstream.
    expect(refused.status).toMatchObject({ reason: 'Evicted', message: 'Pod was rejected: The node had condition: [MemoryPressure]. ' });

    const g = await pod('guaranteed');
    expect(g?.status?.phase).toBe('Running');
    expect(g?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  }, 150_000);
});
