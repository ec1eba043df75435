/**
 * Upstream pod-lifecycle semantics on real containerd (issue 12): image pull
 * backoff, native sidecars, init containers after a new sandbox, lifecycle
 * hooks, killPod of every sandbox, activeDeadlineSeconds and hostPort
 * admission. One agent serves every case; each case has its own pod.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { UNREACHABLE_IMAGE } from '../conformance/cri-conformance.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';
const SLEEP = ['sh', '-c', 'sleep 3600'];

type ContainerJSON = Record<string, unknown> & { name: string };

describeE2E('pod lifecycle on containerd (upstream semantics)', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-lc-${run}`;
  let agent: AgentProcess;
  let cri: CriClient;

  const manifest = (name: string, containers: ContainerJSON[], spec: Record<string, unknown> = {}): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      terminationGracePeriodSeconds: 5,
      ...spec,
      containers: containers.map((c) => ({ image: BUSYBOX, ...c })),
    },
  });
  const cs = (pod: Pod | undefined, name: string) =>
    pod?.status?.containerStatuses?.find((c) => c.name === name) ?? pod?.status?.initContainerStatuses?.find((c) => c.name === name);
  const waitPod = <T>(what: string, name: string, cond: (p: Pod) => T | undefined | false, timeoutMs = 90_000) =>
    pollUntil(
      `${what} (${name})`,
      async () => {
        const p = await agent.pod(name);
        return p ? cond(p) : undefined;
      },
      { timeoutMs },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- agent log tail ---\n${agent.tail()}`);
    });
  const podLabel = (name: string) => ({ [LABEL_POD_NAMESPACE]: ns, 'io.kubernetes.pod.name': `${name}-${agent.nodeName}` });
  const sandboxesOf = async (name: string) => (await cri.listPodSandbox({ filter: { labelSelector: podLabel(name) } })).items;
  const containersOf = async (name: string) => (await cri.listContainers({ filter: { labelSelector: podLabel(name) } })).containers;

  beforeAll(async () => {
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    await cri.waitForReady(30_000);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns);
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
    cri?.close();
  });

  it('ImagePullBackOff grows from the last failed pull: 10 s, then 20 s', async () => {
    agent.writeManifest(
      'pullbo',
      manifest('pullbo', [{ name: 'app', command: SLEEP, image: UNREACHABLE_IMAGE, imagePullPolicy: 'IfNotPresent' }]),
    );
    const pulls = new RegExp(`Pulling image .*${UNREACHABLE_IMAGE.replace(/[.]/g, '\\.')}.*pullbo-`);
    await pollUntil('three pull attempts', async () => agent.logTimes(pulls).length >= 3, { timeoutMs: 150_000 }).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    const [t0, t1, t2] = agent.logTimes(pulls);
    const gap1 = (t1! - t0!) / 1000;
    const gap2 = (t2! - t1!) / 1000;
    // A pull waits for the backoff, then for the pod's next sync (error retries every 10–15 s).
    expect(gap1).toBeGreaterThanOrEqual(9.5);
    expect(gap1).toBeLessThan(10 + 16);
    expect(gap2).toBeGreaterThanOrEqual(19.5);
    expect(gap2).toBeLessThan(20 + 16);
    const p = await agent.pod('pullbo');
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(cs(p, 'app')?.state?.waiting?.reason);
    agent.deleteManifest('pullbo');
  });
});
