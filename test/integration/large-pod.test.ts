/**
 * A pod with more containers than a relist record or status cache slot
 * holds in place must not take the node down (issue 36, item 2): the agent
 * CLI on the embedded simulated runtime runs a 200-container pod beside a
 * crash-looping one. Before the fix every relist failed with "holds at most
 * 64 containers": the crash loop went unseen (running, 0 restarts) and after
 * 3 minutes PLEG health stopped the sync loop for every pod.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess, podManifest } from '../e2e/agent-harness.js';

const CONTAINERS = 200;

describe('a 200-container pod beside a crash loop (agent CLI, simulated runtime)', () => {
  const agent = new AgentProcess('sim', 'big-node', 'big', ['--worker-threads=2']);

  beforeAll(async () => {
    const many = Array.from({ length: CONTAINERS }, (_, i) => ({ name: `c${i}`, command: ['sleep', 'infinity'] }));
    agent.writeManifest('many', podManifest('many', 'big', many));
    agent.writeManifest('crash', podManifest('crash', 'big', [{ name: 'crasher', command: ['sh', '-c', 'sleep 1; exit 1'] }]));
    await agent.start();
  });

  afterAll(async () => {
    await agent.stop();
    rmSync(agent.dir, { recursive: true, force: true });
  });

  it('runs every container of the large pod, and reports each', async () => {
    const statuses = await agent.waitPod(
      `all ${CONTAINERS} containers running`,
      'many',
      (p) => {
        const cs = p.status?.containerStatuses ?? [];
        return cs.length === CONTAINERS && cs.every((c) => c.state?.running) && cs;
      },
      120_000,
    );
    expect(new Set(statuses.map((c) => c.containerID)).size).toBe(CONTAINERS);
  });

  it('sees the crash loop and restarts it with its backoff while the large pod runs', async () => {
    // First restart at once, the second after the 10 s CrashLoopBackOff: well inside a minute.
    const restarts = await agent.waitPod(
      'the crasher restarted twice',
      'crash',
      (p) => {
        const n = p.status?.containerStatuses?.[0]?.restartCount ?? 0;
        return n >= 2 && n;
      },
      60_000,
    );
    expect(restarts).toBeGreaterThanOrEqual(2);
    const many = await agent.pod('many');
    expect(many?.status?.containerStatuses?.every((c) => c.state?.running && c.restartCount === 0)).toBe(true);
  });

  it('keeps the PLEG healthy and every relist whole', async () => {
    const health = await fetch(`http://127.0.0.1:${agent.healthzPort}/healthz?verbose`);
    expect(health.status).toBe(200);
    const metrics = await (await fetch(agent.metricsUrl)).text();
    expect(metrics).toMatch(/^kubelet_ts_pleg_skipped_pods 0$/m);
    // "PLEG is not healthy: pleg has yet to be successful" at start is upstream's wording before the first relist.
    const bad = agent.logs.filter((l) =>
      /Unable to retrieve pods|relist failed|pleg was last seen|CapacityError|left out of the relist/.test(l),
    );
    expect(bad).toEqual([]);
  });
});
