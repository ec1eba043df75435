/**
 * /stats/summary on real containerd (1.6 here): every pod is reported, those whose sandbox containerd cannot
 * give stats for ("cgroupPath is empty": the sandboxes kubelet-ts creates have no cgroup parent) with CPU and
 * memory summed from their containers, as upstream's CRI stats provider does when a pod cgroup's stats are
 * missing. Before the fix the whole summary was an HTTP 500.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentProcess, podManifest } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

interface Summary {
  node: { nodeName: string };
  pods: {
    podRef: { name: string; namespace: string; uid: string };
    containers?: { name: string; memory?: { workingSetBytes?: number } }[];
    cpu?: { usageCoreNanoSeconds?: number };
    memory?: { workingSetBytes?: number };
  }[];
}

describeE2E('/stats/summary on containerd', () => {
  const id = randomUUID().slice(0, 6);
  const ns = `kts-e2e-stats-${id}`;
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `kts-e2e-stats-${id}`, ns);
    for (const name of ['one', 'two']) agent.writeManifest(name, podManifest(name, ns, [{ name: 'app', command: ['sleep', '3600'] }]));
    await agent.start();
    for (const name of ['one', 'two']) await agent.waitPod('Running', name, (p) => p.status?.phase === 'Running');
  });

  afterAll(async () => {
    await agent?.cleanup();
  });

  it('answers 200 with every pod, their containers, and pod CPU and memory', async () => {
    const summary = await agent.until('a summary with both pods and their container stats', async () => {
      const r = await fetch(`http://127.0.0.1:${agent.readOnlyPort}/stats/summary`);
      if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
      const s = (await r.json()) as Summary;
      const mine = s.pods.filter((p) => p.podRef.namespace === ns);
      return mine.length === 2 && mine.every((p) => p.containers?.[0]?.memory?.workingSetBytes !== undefined) && s;
    });
    const mine = summary.pods.filter((p) => p.podRef.namespace === ns).sort((a, b) => a.podRef.name.localeCompare(b.podRef.name));
    expect(mine.map((p) => p.podRef.name)).toEqual([`one-${agent.nodeName}`, `two-${agent.nodeName}`]);
    for (const p of mine) {
      expect(p.containers?.map((c) => c.name)).toEqual(['app']);
      expect(p.memory?.workingSetBytes).toBeGreaterThan(0);
      expect(p.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
    }
  });
});
