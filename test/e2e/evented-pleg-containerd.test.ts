/**
 * --pleg=evented on containerd 1.6, which does not implement
 * GetContainerEvents: the agent falls back to the generic PLEG with one clear
 * log line and runs pods as usual (a death is noticed by the 1 s relist).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { AgentProcess, podManifest } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

describeE2E('evented PLEG on containerd 1.6', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-ev-${run}`;
  let agent: AgentProcess;
  let cri: CriClient;

  beforeAll(async () => {
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    await cri.waitForReady(30_000);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns, ['--pleg=evented']);
    agent.writeManifest('ev', podManifest('ev', ns, [{ name: 'app', command: ['sh', '-c', 'sleep 3600'] }]));
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
    cri?.close();
  });

  it('falls back to the generic PLEG with one log line and keeps running pods', async () => {
    await agent.waitPod('running', 'ev', (p) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running);
    const fallback = agent.logs.filter((l) => /Evented PLEG is not usable/.test(l));
    expect(fallback).toHaveLength(1);
    expect(fallback[0]).toMatch(/does not implement GetContainerEvents.*falling back to the generic PLEG \(relist every 1s\)/);
    expect(agent.logs.filter((l) => /Evented PLEG/.test(l))).toHaveLength(1);

    // The relist (1 s again) sees a container die: the pod restarts it (restartPolicy Always).
    const [c] = (await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns } } })).containers;
    await cri.stopContainer({ containerId: c.id, timeout: 0 });
    await agent.waitPod(
      'restarted',
      'ev',
      (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && p.status?.containerStatuses?.[0]?.state?.running,
    );
  });
});
