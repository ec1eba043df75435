/**
 * A healthy cluster run logs nothing at warning or error level (issue 29): a kubelet-ts node joins the real
 * control plane, runs a Deployment, serves /stats/summary with its pods (containerd 1.6 cannot give their
 * sandboxes' stats), and removes them when the Deployment is deleted (the deleted pod's containers are removed
 * once each, not raced by every ContainerDied), then stops.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContainerState } from '../../src/gen/runtime/v1/api.js';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { AgentProcess } from './agent-harness.js';
import {
  deleteNodeObjects,
  describeCluster,
  kubectl,
  kubectlApply,
  kubectlJson,
  nodeKubeconfig,
  condition,
  getOrUndefined,
} from './cluster-env.js';
import { CONTAINERD_ENDPOINT } from './e2e-env.js';

interface PodList {
  items: { metadata: { name: string }; status?: { phase?: string } }[];
}

describeCluster('a healthy cluster run is quiet', () => {
  const id = randomUUID().slice(0, 6);
  const nodeName = `kts-e2e-quiet-${id}`;
  const ns = `kts-e2e-quiet-${id}`;
  let agent: AgentProcess;
  let cri: CriClient;

  beforeAll(async () => {
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    await kubectl('create', 'namespace', ns);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, nodeName, ns);
    agent.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(nodeName, join(agent.dir, 'kubeconfig'))}`);
    await agent.start();
    await agent.until('the node to be Ready', async () => condition(await getOrUndefined('node', nodeName), 'Ready')?.status === 'True');
  });

  afterAll(async () => {
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
    await agent?.cleanup();
    cri?.close();
    await deleteNodeObjects(nodeName);
  });

  it('a Deployment created, summarised and deleted, then a stop: no warning or error line', async () => {
    await kubectlApply(ns, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': nodeName },
            terminationGracePeriodSeconds: 2,
            // Two containers: each one's ContainerDied asks for every dead container of the deleted pod.
            containers: ['web', 'side'].map((name) => ({ name, image: 'docker.io/kubelet-ts/busybox:1.0', command: ['sleep', '3600'] })),
          },
        },
      },
    });
    const pods = () => kubectlJson<PodList>('-n', ns, 'get', 'pods');
    const running = await agent.until('both replicas Running', async () => {
      const list = await pods();
      return list.items.length === 2 && list.items.every((p) => p.status?.phase === 'Running') && list.items;
    });

    const summary = await agent.until('/stats/summary with both pods', async () => {
      const r = await fetch(`http://127.0.0.1:${agent.readOnlyPort}/stats/summary`);
      if (r.status !== 200) throw new Error(`/stats/summary: HTTP ${r.status}: ${await r.text()}`);
      const s = (await r.json()) as { pods: { podRef: { name: string; namespace: string } }[] };
      const names = s.pods.filter((p) => p.podRef.namespace === ns).map((p) => p.podRef.name);
      return names.length === 2 && names.sort();
    });
    expect(summary).toEqual(running.map((p) => p.metadata.name).sort());

    await kubectl('-n', ns, 'delete', 'deployment', 'web', '--wait=false');
    await agent.until('the pods deleted', async () => (await pods()).items.length === 0, 120_000);
    await agent.until(
      "the deleted pods' containers removed from the runtime",
      async () => {
        const left = await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns } } });
        return left.containers.filter((c) => c.state !== ContainerState.CONTAINER_RUNNING).length === 0 && left.containers.length === 0;
      },
      120_000,
    );
    await agent.stop('SIGINT');
    expect(agent.logs.filter((l) => /^[EWF]\d{4} /.test(l))).toEqual([]);
  });
});
