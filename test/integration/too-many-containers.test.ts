/**
 * Hostile input (issue 33): a static pod of 10,000 containers. The agent CLI
 * on the embedded simulated runtime rejects it at admission
 * (--max-containers-per-pod, default 250): phase Failed, reason
 * TooManyContainers, a Warning event, and not one of its containers started,
 * while a bystander pod runs and the agent stays healthy.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { AgentProcess, podManifest } from '../e2e/agent-harness.js';

const CONTAINERS = 10_000;

describe('a static pod of 10,000 containers (agent CLI, simulated runtime)', () => {
  const agent = new AgentProcess('sim', 'hostile-node', 'hostile', ['--v=3']);

  beforeAll(async () => {
    const many = Array.from({ length: CONTAINERS }, (_, i) => ({ name: `c${i}`, command: ['sleep', 'infinity'] }));
    agent.writeManifest('many', podManifest('many', 'hostile', many));
    agent.writeManifest('bystander', podManifest('bystander', 'hostile', [{ name: 'app', command: ['sleep', 'infinity'] }]));
    await agent.start();
  });

  afterAll(async () => {
    await agent.stop();
    rmSync(agent.dir, { recursive: true, force: true });
  });

  it('rejects the pod at admission with TooManyContainers, and says why', async () => {
    const status = await agent.waitPod('the large pod rejected', 'many', (p) => p.status?.phase === 'Failed' && p.status, 120_000);
    expect(status.reason).toBe('TooManyContainers');
    expect(status.message).toBe(
      `Pod was rejected: the pod has ${CONTAINERS} containers (init, regular and ephemeral), over this node's limit of 250 (--max-containers-per-pod; 0 = no limit)`,
    );
    await agent.until('the Warning event logged', () => agent.logs.some((l) => /TooManyContainers/.test(l) && /Warning/.test(l)), 30_000);
    expect(agent.logs.filter((l) => l.includes('Pod rejected by admission'))).toHaveLength(1);
  });

  it('runs the bystander, starts nothing of the rejected pod, and stays healthy', async () => {
    await agent.waitPod(
      'the bystander running',
      'bystander',
      (p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined,
      120_000,
    );
    const cri = new CriClient({ runtimeEndpoint: `unix://${join(agent.dir, 'root', 'sim', 'cri.sock')}`, timeoutMs: 10_000 });
    try {
      const { items } = await cri.listPodSandbox({});
      const names = items.map((s) => s.metadata?.name);
      expect(names).toContain('bystander-hostile-node');
      expect(names.filter((n) => n?.startsWith('many'))).toEqual([]);
    } finally {
      cri.close();
    }
    const health = await fetch(`http://127.0.0.1:${agent.healthzPort}/healthz`);
    expect(health.status).toBe(200);
  });
});
