/**
 * The first vertical slice on real containerd: static pod manifests become
 * running pods through the kubelet-ts CLI, with upstream restart, init
 * container, update, delete and image-pull semantics.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { CriClient } from '../../src/cri/client.js';
import { ContainerState, PodSandboxState } from '../../src/gen/runtime/v1/api.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { pollUntil } from '../helpers/poll.js';
import { UNREACHABLE_IMAGE } from '../conformance/cri-conformance.js';
import { AgentProcess, podManifest } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const SLEEP = ['sh', '-c', 'sleep 3600'];

describeE2E('static pods on containerd', () => {
  const run = randomUUID().slice(0, 6);
  const ns = `e2e-${run}`;
  let agent: AgentProcess;
  let cri: CriClient;

  const cs = (pod: Pod | undefined, name: string) => pod?.status?.containerStatuses?.find((c) => c.name === name);
  const waitPod = <T>(what: string, name: string, cond: (p: Pod) => T | undefined | false, timeoutMs?: number) =>
    agent.waitPod(what, name, cond, timeoutMs);
  const sandboxesOf = async (name: string) =>
    (
      await cri.listPodSandbox({
        filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns, 'io.kubernetes.pod.name': `${name}-${agent.nodeName}` } },
      })
    ).items;
  const containersOf = async (name: string) =>
    (
      await cri.listContainers({
        filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns, 'io.kubernetes.pod.name': `${name}-${agent.nodeName}` } },
      })
    ).containers;

  beforeAll(async () => {
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    await cri.waitForReady(30_000);
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns);
    for (let i = 0; i < 20; i++) agent.writeManifest(`sleep-${i}`, podManifest(`sleep-${i}`, ns, [{ name: 'app', command: SLEEP }]));
    await agent.start();
  });

  afterAll(async () => {
    await agent?.cleanup();
    cri?.close();
  });

  it('runs 20 static pods: Running and ready in /pods, listed by the CRI with proper names', async () => {
    await pollUntil(
      '20 running, ready pods',
      async () => {
        const pods = (await agent.pods()).filter((p) => p.metadata.name?.startsWith('sleep-'));
        return (
          pods.length === 20 &&
          pods.every((p) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        );
      },
      { timeoutMs: 120_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    const boxes = (
      await cri.listPodSandbox({
        filter: { labelSelector: { [LABEL_POD_NAMESPACE]: ns }, state: { state: PodSandboxState.SANDBOX_READY } },
      })
    ).items;
    const names = boxes.map((b) => b.metadata?.name).filter((n) => n?.startsWith('sleep-'));
    expect(new Set(names).size).toBe(20);
    expect(names).toContain(`sleep-7-${agent.nodeName}`);
    const containers = await containersOf('sleep-7');
    expect(containers.map((c) => [c.metadata?.name, c.state])).toEqual([['app', ContainerState.CONTAINER_RUNNING]]);
    expect(containers[0].labels['io.kubernetes.container.name']).toBe('app');
    expect(containers[0].annotations['io.kubernetes.container.hash']).toMatch(/^[0-9a-f]+$/);
    const p = await agent.pod('sleep-7');
    expect(p?.status?.podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(cs(p, 'app')?.containerID).toBe(`containerd://${containers[0].id}`);
  });

  it('restartPolicy Always: a container exiting 1 restarts with growing backoff (CrashLoopBackOff)', async () => {
    agent.writeManifest('crash', podManifest('crash', ns, [{ name: 'crasher', command: ['sh', '-c', 'exit 1'] }]));
    await waitPod(
      'restartCount >= 2 and CrashLoopBackOff',
      'crash',
      (p) => {
        const c = cs(p, 'crasher');
        return (c?.restartCount ?? 0) >= 2 && c?.state?.waiting?.reason === 'CrashLoopBackOff' && c;
      },
      120_000,
    );
    const p = await agent.pod('crash');
    expect(p?.status?.phase).toBe('Running');
    expect(cs(p, 'crasher')?.lastState?.terminated?.exitCode).toBe(1);
    expect(cs(p, 'crasher')?.state?.waiting?.message).toMatch(/back-off (10|20|40)s restarting failed container=crasher/);
  });

  it('restartPolicy OnFailure: exiting 0 ends Succeeded and is not restarted', async () => {
    agent.writeManifest(
      'done',
      podManifest('done', ns, [{ name: 'job', command: ['sh', '-c', 'echo ok; exit 0'] }], { restartPolicy: 'OnFailure' }),
    );
    await waitPod('phase Succeeded', 'done', (p) => p.status?.phase === 'Succeeded');
    const p = await agent.pod('done');
    expect(cs(p, 'job')?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(cs(p, 'job')?.restartCount).toBe(0);
    expect((await containersOf('done')).length).toBe(1);
  });

  it('restartPolicy Never: exiting 1 ends Failed', async () => {
    agent.writeManifest('never', podManifest('never', ns, [{ name: 'once', command: ['sh', '-c', 'exit 1'] }], { restartPolicy: 'Never' }));
    await waitPod('phase Failed', 'never', (p) => p.status?.phase === 'Failed');
    const p = await agent.pod('never');
    expect(cs(p, 'once')?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect((await containersOf('never')).length).toBe(1);
  });

  it('init containers run in order before app containers; a failing one blocks them', async () => {
    agent.writeManifest(
      'init',
      podManifest('init', ns, [{ name: 'app', command: SLEEP }], {
        initContainers: [
          { name: 'first', command: ['sh', '-c', 'sleep 1'] },
          { name: 'second', command: ['true'] },
        ],
      }),
    );
    await waitPod('phase Running after inits', 'init', (p) => p.status?.phase === 'Running' && cs(p, 'app')?.state?.running);
    const byName = new Map((await containersOf('init')).map((c) => [c.metadata?.name, c]));
    const status = async (n: string) => (await cri.containerStatus({ containerId: byName.get(n)!.id })).status!;
    const [first, second, app] = [await status('first'), await status('second'), await status('app')];
    expect(first.exitCode).toBe(0);
    expect(second.startedAt).toBeGreaterThanOrEqual(first.finishedAt);
    expect(app.startedAt).toBeGreaterThanOrEqual(second.finishedAt);

    agent.writeManifest(
      'initfail',
      podManifest('initfail', ns, [{ name: 'app', command: SLEEP }], {
        restartPolicy: 'Never',
        initContainers: [{ name: 'broken', command: ['sh', '-c', 'exit 3'] }],
      }),
    );
    await waitPod('phase Failed', 'initfail', (p) => p.status?.phase === 'Failed');
    const names = (await containersOf('initfail')).map((c) => c.metadata?.name);
    expect(names).toEqual(['broken']);
  });

  it('editing a manifest’s command replaces that pod’s containers and leaves the others alone', async () => {
    const otherBefore = (await containersOf('sleep-3')).map((c) => c.id);
    agent.writeManifest('edit', podManifest('edit', ns, [{ name: 'app', command: ['sh', '-c', 'sleep 3600'] }]));
    await waitPod('first version running', 'edit', (p) => cs(p, 'app')?.state?.running);
    const oldIds = (await containersOf('edit')).map((c) => c.id);
    agent.writeManifest('edit', podManifest('edit', ns, [{ name: 'app', command: ['sh', '-c', 'echo v2; sleep 3600'] }]));
    await pollUntil(
      'the old container stopped (left for container GC) and a new one running',
      async () => {
        const now = await containersOf('edit');
        const running = now.filter((c) => c.state === ContainerState.CONTAINER_RUNNING);
        return (
          running.length === 1 &&
          !oldIds.includes(running[0].id) &&
          now.filter((c) => oldIds.includes(c.id)).every((c) => c.state === ContainerState.CONTAINER_EXITED)
        );
      },
      { timeoutMs: 90_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    expect((await containersOf('sleep-3')).map((c) => c.id)).toEqual(otherBefore);
  });

  it('deleting a manifest stops its containers within the grace period; container GC removes them later', async () => {
    agent.writeManifest('gone', podManifest('gone', ns, [{ name: 'app', command: SLEEP }], { grace: 5 }));
    await waitPod('running', 'gone', (p) => cs(p, 'app')?.state?.running);
    const t0 = Date.now();
    agent.deleteManifest('gone');
    await pollUntil(
      'the container exited and the sandbox stopped',
      async () => {
        const [boxes, containers] = [await sandboxesOf('gone'), await containersOf('gone')];
        return (
          boxes.every((b) => b.state === PodSandboxState.SANDBOX_NOTREADY) &&
          containers.every((c) => c.state === ContainerState.CONTAINER_EXITED) &&
          boxes.length + containers.length > 0
        );
      },
      { timeoutMs: 60_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    expect(Date.now() - t0).toBeLessThan(5_000 + 20_000);
    expect(await agent.pod('gone')).toBeUndefined();
    // Container GC runs every minute: the dead container and sandbox go within about a period.
    await pollUntil(
      'the sandbox removed by container GC',
      async () => (await sandboxesOf('gone')).length === 0 && (await containersOf('gone')).length === 0,
      {
        timeoutMs: 100_000,
      },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
  });

  it('an unpullable image shows ErrImagePull / ImagePullBackOff while the other pods run', async () => {
    agent.writeManifest('pull', podManifest('pull', ns, [{ name: 'app', command: SLEEP, image: UNREACHABLE_IMAGE }]));
    await waitPod('an image pull waiting reason', 'pull', (p) => {
      const r = cs(p, 'app')?.state?.waiting?.reason;
      return (r === 'ErrImagePull' || r === 'ImagePullBackOff') && r;
    });
    await waitPod('ImagePullBackOff', 'pull', (p) => cs(p, 'app')?.state?.waiting?.reason === 'ImagePullBackOff');
    const others = (await agent.pods()).filter((p) => p.metadata.name?.startsWith('sleep-'));
    expect(others.every((p) => p.status?.phase === 'Running')).toBe(true);
  });
});
