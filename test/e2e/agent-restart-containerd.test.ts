/**
 * Restart adoption on real containerd: after SIGKILL, a new agent on the same
 * manifests adopts the running containers: none duplicated, none restarted.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess, podManifest } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

describeE2E('agent restart on containerd', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-restart-${run}`;
  let agent: AgentProcess;
  let cri: CriClient;

  const snapshot = async () => {
    const containers = (await cri.listContainers({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns } } })).containers;
    const boxes = (await cri.listPodSandbox({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns } } })).items;
    return {
      containers: containers.map((c) => `${c.id}:${c.state}`).sort(),
      sandboxes: boxes.map((b) => `${b.id}:${b.state}`).sort(),
    };
  };

  beforeAll(async () => {
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns);
    for (let i = 0; i < 5; i++)
      agent.writeManifest(
        `keep-${i}`,
        podManifest(`keep-${i}`, ns, [
          { name: 'a', command: ['sleep', '3600'] },
          { name: 'b', command: ['sleep', '3600'] },
        ]),
      );
    agent.writeManifest(
      'with-init',
      podManifest('with-init', ns, [{ name: 'app', command: ['sleep', '3600'] }], {
        initContainers: [{ name: 'init', command: ['true'] }],
      }),
    );
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
    cri?.close();
  });

  it('a SIGKILLed agent, started again, duplicates and restarts nothing', async () => {
    await pollUntil(
      'all pods running',
      async () => {
        const pods = await agent.pods();
        return (
          pods.length === 6 &&
          pods.every((p) => p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running))
        );
      },
      { timeoutMs: 120_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    const before = await snapshot();
    expect(before.containers, `${JSON.stringify(before)}\n${agent.tail(300)}`).toHaveLength(12);
    expect(before.sandboxes).toHaveLength(6);

    await agent.stop('SIGKILL');
    await agent.start();
    await pollUntil(
      'the new agent to report all pods running',
      async () => {
        const pods = await agent.pods();
        return (
          pods.length === 6 &&
          pods.every(
            (p) => p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running && c.restartCount === 0),
          )
        );
      },
      { timeoutMs: 120_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    // Several relists (and with them housekeeping rounds, every 2 s) must not change anything either.
    await pollUntil(
      '5 relists by the new agent',
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${agent.port}/metrics`)).text();
        return Number(/^kubelet_pleg_relist_duration_seconds_count (\d+)/m.exec(text)?.[1] ?? 0) >= 5;
      },
      { timeoutMs: 60_000 },
    );
    const after = await pollUntil('a stable runtime view', async () => {
      const a = await snapshot();
      const b = await snapshot();
      return JSON.stringify(a) === JSON.stringify(b) && a;
    });
    expect(after).toEqual(before);
  });
});
