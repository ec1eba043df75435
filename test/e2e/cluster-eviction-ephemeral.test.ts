/**
 * Local ephemeral storage limits on a kubelet-ts node (eviction/local-storage.ts, upstream
 * eviction_manager.go localStorageEviction), with no node pressure: a container writing beyond its own
 * ephemeral-storage limit into its writable layer, or into its logs, is evicted with upstream's container
 * message; a pod whose emptyDir and containers together exceed the sum of its containers' limits is evicted
 * with the pod message; a pod within its limits, measured in the same passes, stays. Each over-limit pod
 * pairs the writing container with an idle one holding a large limit, so that only the check under test
 * can match (upstream tries emptyDir, then pod, then container limits, first match wins).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentProcess } from './agent-harness.js';
import {
  applyNodePod,
  condition,
  containerLogHas,
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

interface Container {
  name: string;
  limit: string;
  script: string;
}

describeCluster('local ephemeral storage limit eviction on a kubelet-ts node', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-eve-${id}`;
  const ns = `kts-e2e-eve-${id}`;
  let agent: AgentProcess | undefined;

  const pod = (name: string) => getOrUndefined<ClusterPod>('pod', '-n', ns, name);
  const create = (name: string, containers: Container[]) =>
    applyNodePod(ns, nodeName, name, {
      containers: containers.map((c) => ({
        name: c.name,
        image: IMAGE,
        command: ['sh', '-c', `${c.script}; sleep 3600`],
        resources: { limits: { 'ephemeral-storage': c.limit } },
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      })),
      volumes: [{ name: 'data', emptyDir: {} }],
    });
  const idle: Container = { name: 'idle', limit: '50Mi', script: 'true' };

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns, ['--node-status-update-frequency=2s']);
    await startClusterAgent(agent);
  }, 120_000);

  afterAll(() => removeClusterTest(ns, agent, nodeName), 120_000);

  it('evicts containers over their own limit (writable layer, logs) and a pod over its total; one within stays', async () => {
    const a = agent!;
    // Within its limits (20 MiB for 2 MiB in its writable layer, 2 MiB in its emptyDir), written before the others
    // start: every pass that measures them measures it too.
    await create('within', [
      {
        name: 'app',
        limit: '20Mi',
        script: 'dd if=/dev/zero of=/fill bs=1M count=2; dd if=/dev/zero of=/data/fill bs=1M count=2; sync; echo written',
      },
    ]);
    await a.until('the pod within its limits has written', () => containerLogHas(join(a.dir, 'pod-logs'), ns, 'within', 'app', 'written'));

    const started = Date.now();
    await create('rootfs-over', [idle, { name: 'writer', limit: '2Mi', script: 'dd if=/dev/zero of=/fill bs=1M count=6; sync' }]);
    // About 3 MB of log lines (1000 characters each) against a 1 MiB limit.
    await create('logs-over', [idle, { name: 'talker', limit: '1Mi', script: "head -c 3000000 /dev/zero | tr '\\0' x | fold -w 1000" }]);
    // 4 MiB each into the shared emptyDir: 8 MiB over the pod's 3Mi + 3Mi, while each container's own usage is small.
    await create('pod-over', [
      { name: 'one', limit: '3Mi', script: 'dd if=/dev/zero of=/data/one bs=1M count=4; sync' },
      { name: 'two', limit: '3Mi', script: 'dd if=/dev/zero of=/data/two bs=1M count=4; sync' },
    ]);

    const [rootfs, logs, total] = await Promise.all([
      waitPodFailed(a, ns, 'rootfs-over', 'the pod whose writer is over its limit evicted', 75_000),
      waitPodFailed(a, ns, 'logs-over', 'the pod whose talker is over its limit evicted', 75_000),
      waitPodFailed(a, ns, 'pod-over', 'the pod over its total limit evicted', 75_000),
    ]);
    expect(rootfs.status).toMatchObject({
      reason: 'Evicted',
      message: 'Container writer exceeded its local ephemeral storage limit "2Mi". ',
    });
    expect(logs.status).toMatchObject({
      reason: 'Evicted',
      message: 'Container talker exceeded its local ephemeral storage limit "1Mi". ',
    });
    expect(total.status).toMatchObject({
      reason: 'Evicted',
      message: 'Pod ephemeral local storage usage exceeds the total limit of containers 6Mi. ',
    });
    console.log(`three pods over their limits evicted ${((Date.now() - started) / 1000).toFixed(1)} s after they were created`);

    // No node pressure was involved, and the pod within its limits runs on.
    expect(condition(await getOrUndefined<NodeObject>('node', nodeName), 'DiskPressure')?.status).toBe('False');
    const within = await pod('within');
    expect(within?.status?.phase).toBe('Running');
    expect(within?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  }, 150_000);
});
