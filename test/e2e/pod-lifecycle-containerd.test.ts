/**
 * Upstream pod-lifecycle semantics on real containerd (issue 12): image pull
 * backoff, native sidecars, init containers after a new sandbox, lifecycle
 * hooks, killPod of every sandbox, activeDeadlineSeconds and hostPort
 * admission. One agent serves every case; each case has its own pod.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { CriClient } from '../../src/cri/client.js';
import { ContainerState, PodSandboxState } from '../../src/gen/runtime/v1/api.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { UNREACHABLE_IMAGE } from '../conformance/cri-conformance.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from './agent-harness.js';
import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';

const BUSYBOX = 'docker.io/kubelet-ts/busybox:1.0';
const SLEEP = ['sh', '-c', 'sleep 3600'];

type ContainerJSON = Record<string, unknown> & { name: string };

/** host-local IPAM's directory for our containerd (scripts/containerd.sh): one file per allocated pod IP. */
const IPAM_DIR = join(
  process.env.KTS_CONTAINERD_RUN ?? '/run/kubelet-ts-containerd',
  'cni/networks',
  `kubelet-ts-${process.env.KTS_CNI_BRIDGE ?? 'ktsbr0'}`,
);

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
  const waitPod = <T>(what: string, name: string, cond: (p: Pod) => T | undefined | false, timeoutMs?: number) =>
    agent.waitPod(what, name, cond, timeoutMs);
  const podLabel = (name: string) => ({ [LABEL_POD_NAMESPACE]: ns, 'io.kubernetes.pod.name': `${name}-${agent.nodeName}` });
  const sandboxesOf = async (name: string) => (await cri.listPodSandbox({ filter: { labelSelector: podLabel(name) } })).items;
  const containersOf = async (name: string) => (await cri.listContainers({ filter: { labelSelector: podLabel(name) } })).containers;

  beforeAll(async () => {
    cri = new CriClient({ runtimeEndpoint: CONTAINERD_ENDPOINT, timeoutMs: 60_000 });
    await cri.waitForReady(30_000);
    // --v=3: the tests read pod events (Pulling, FailedPostStartHook) from the log, where the recorder writes them at V(3).
    agent = new AgentProcess(CONTAINERD_ENDPOINT, `node-${run}`, ns, ['--v=3']);
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
    const gap1 = (t1 - t0) / 1000;
    const gap2 = (t2 - t1) / 1000;
    // A pull waits for the backoff, then for the pod's next sync (error retries every 10–15 s).
    expect(gap1).toBeGreaterThanOrEqual(9.5);
    expect(gap1).toBeLessThan(10 + 16);
    expect(gap2).toBeGreaterThanOrEqual(19.5);
    expect(gap2).toBeLessThan(20 + 16);
    const p = await agent.pod('pullbo');
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(cs(p, 'app')?.state?.waiting?.reason);
    agent.deleteManifest('pullbo');
  });
  it('sidecars: started in order before the app and kept running; the app is not blocked', async () => {
    agent.writeManifest(
      'sidecar',
      manifest('sidecar', [{ name: 'app', command: SLEEP }], {
        initContainers: [
          { name: 'side', image: BUSYBOX, restartPolicy: 'Always', command: SLEEP },
          { name: 'init', image: BUSYBOX, command: ['true'] },
        ],
      }),
    );
    await waitPod(
      'Running with the app and the sidecar up',
      'sidecar',
      (p) => p.status?.phase === 'Running' && cs(p, 'app')?.state?.running && cs(p, 'side')?.state?.running,
    );
    const p = await agent.pod('sidecar');
    expect(cs(p, 'init')?.state?.terminated?.exitCode).toBe(0);
    const started = new Map<string, bigint>();
    for (const c of await containersOf('sidecar')) {
      const st = (await cri.containerStatus({ containerId: c.id })).status!;
      started.set(c.metadata!.name, BigInt(st.startedAt));
    }
    expect(started.get('side')! <= started.get('init')!).toBe(true);
    expect(started.get('init')! <= started.get('app')!).toBe(true);
  });

  it('sidecars: restarted under restartPolicy Never, and they do not keep a finished pod alive', async () => {
    agent.writeManifest(
      'sidejob',
      manifest('sidejob', [{ name: 'job', command: ['sh', '-c', 'sleep 14; exit 0'] }], {
        restartPolicy: 'Never',
        initContainers: [{ name: 'side', image: BUSYBOX, restartPolicy: 'Always', command: ['sh', '-c', 'sleep 1; exit 1'] }],
      }),
    );
    await waitPod('the sidecar restarted at least once', 'sidejob', (p) => (cs(p, 'side')?.restartCount ?? 0) >= 1, 60_000);
    await waitPod('phase Succeeded', 'sidejob', (p) => p.status?.phase === 'Succeeded', 60_000);
    await pollUntil(
      'no container of the finished pod running',
      async () => (await containersOf('sidejob')).every((c) => c.state !== ContainerState.CONTAINER_RUNNING),
      {
        timeoutMs: 30_000,
      },
    );
  });

  it('sidecars stop after the app containers on termination', async () => {
    const trapping = (delay: number) => ['sh', '-c', `trap "sleep ${delay}; exit 0" TERM; sleep 3600 & wait`];
    agent.writeManifest(
      'order',
      manifest('order', [{ name: 'app', command: trapping(3) }], {
        terminationGracePeriodSeconds: 20,
        initContainers: [{ name: 'side', image: BUSYBOX, restartPolicy: 'Always', command: trapping(0) }],
      }),
    );
    await waitPod('running', 'order', (p) => cs(p, 'app')?.state?.running && cs(p, 'side')?.state?.running);
    agent.deleteManifest('order');
    const finished = await pollUntil(
      'both containers exited',
      async () => {
        const list = await containersOf('order');
        if (list.length < 2 || list.some((c) => c.state !== ContainerState.CONTAINER_EXITED)) return undefined;
        const out = new Map<string, bigint>();
        for (const c of list) out.set(c.metadata!.name, BigInt((await cri.containerStatus({ containerId: c.id })).status!.finishedAt));
        return out;
      },
      { timeoutMs: 60_000 },
    );
    // The app takes 3 s to stop; the sidecar only gets its SIGTERM after that.
    expect(finished.get('side')! >= finished.get('app')!).toBe(true);
  });

  it('a new sandbox runs every init container again before the app (old init containers purged)', async () => {
    agent.writeManifest(
      'reinit',
      manifest('reinit', [{ name: 'app', command: SLEEP }], {
        initContainers: [
          { name: 'init1', image: BUSYBOX, command: ['true'] },
          { name: 'init2', image: BUSYBOX, command: ['true'] },
        ],
      }),
    );
    await waitPod('running', 'reinit', (p) => cs(p, 'app')?.state?.running);
    const [old] = await sandboxesOf('reinit');
    await cri.stopPodSandbox({ podSandboxId: old.id });
    const fresh = await pollUntil(
      'a new sandbox with the app running in it',
      async () => {
        const box = (await sandboxesOf('reinit')).find((b) => b.id !== old.id && b.state === PodSandboxState.SANDBOX_READY);
        if (!box) return undefined;
        const inBox = (await containersOf('reinit')).filter((c) => c.podSandboxId === box.id);
        return inBox.some((c) => c.metadata?.name === 'app' && c.state === ContainerState.CONTAINER_RUNNING) && { box, inBox };
      },
      { timeoutMs: 90_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    const started = new Map<string, bigint>();
    const finished = new Map<string, bigint>();
    for (const c of fresh.inBox) {
      const st = (await cri.containerStatus({ containerId: c.id })).status!;
      started.set(c.metadata!.name, BigInt(st.startedAt));
      finished.set(c.metadata!.name, BigInt(st.finishedAt));
    }
    expect([...started.keys()].sort()).toEqual(['app', 'init1', 'init2']);
    expect(started.get('init2')! >= finished.get('init1')!).toBe(true);
    expect(started.get('app')! >= finished.get('init2')!).toBe(true);
    // Only the new sandbox's init containers exist: the old ones were purged.
    const inits = (await containersOf('reinit')).filter((c) => c.metadata?.name?.startsWith('init'));
    expect(inits.every((c) => c.podSandboxId === fresh.box.id)).toBe(true);
  });

  it('postStart and preStop exec hooks run; a failed postStart kills the container', async () => {
    const trapping = ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait'];
    agent.writeManifest(
      'hooks',
      manifest(
        'hooks',
        [
          {
            name: 'app',
            command: trapping,
            lifecycle: {
              postStart: { exec: { command: ['sh', '-c', 'echo hook > /tmp/poststart'] } },
              preStop: { exec: { command: ['sh', '-c', 'echo prestop-ran > /proc/1/fd/1; sleep 2'] } },
            },
          },
        ],
        { terminationGracePeriodSeconds: 15 },
      ),
    );
    agent.writeManifest(
      'hookfail',
      manifest('hookfail', [{ name: 'app', command: SLEEP, lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 7'] } } } }]),
    );
    await waitPod('running', 'hooks', (p) => cs(p, 'app')?.state?.running);
    const uid = (await agent.pod('hooks'))!.metadata.uid!;
    const [app] = await containersOf('hooks');
    const out = await cri.execSync({ containerId: app.id, cmd: ['cat', '/tmp/poststart'], timeout: 10n });
    expect(Buffer.from(out.stdout).toString().trim()).toBe('hook');

    const t0 = Date.now();
    agent.deleteManifest('hooks');
    // Read the hook's output while the hook still sleeps: once the pod is gone, container GC removes the log.
    const logFile = join(agent.dir, 'pod-logs', `${ns}_hooks-${agent.nodeName}_${uid}`, 'app', '0.log');
    await pollUntil(
      'the preStop hook output in the log',
      () => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('prestop-ran'),
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
    const exitedAt = await pollUntil(
      'the app stopped',
      async () => {
        const st = (await cri.containerStatus({ containerId: app.id })).status!;
        return st.state === ContainerState.CONTAINER_EXITED && Number(BigInt(st.finishedAt) / 1_000_000n);
      },
      { timeoutMs: 60_000 },
    );
    expect(exitedAt - t0).toBeGreaterThanOrEqual(2_000);

    await pollUntil(
      'FailedPostStartHook for hookfail',
      async () => agent.logs.some((l) => /FailedPostStartHook/.test(l) && /hookfail-/.test(l)),
      {
        timeoutMs: 60_000,
      },
    );
    await waitPod('the failed container was killed and restarted', 'hookfail', (p) => (cs(p, 'app')?.restartCount ?? 0) >= 1, 90_000);
  });

  it('killPod stops a sandbox that died on its own, releasing its IP, before the new one starts', async () => {
    agent.writeManifest('deadbox', manifest('deadbox', [{ name: 'app', command: SLEEP }]));
    await waitPod('running', 'deadbox', (p) => cs(p, 'app')?.state?.running);
    const [box] = await sandboxesOf('deadbox');
    const st = await cri.podSandboxStatus({ podSandboxId: box.id, verbose: true });
    const ip = st.status!.network!.ip;
    const pid = (JSON.parse(st.info['info']) as { pid: number }).pid;
    const ipFile = join(IPAM_DIR, ip);
    expect(existsSync(ipFile)).toBe(true);
    process.kill(pid, 'SIGKILL');
    await pollUntil(
      'a new ready sandbox',
      async () => (await sandboxesOf('deadbox')).some((b) => b.id !== box.id && b.state === PodSandboxState.SANDBOX_READY),
      {
        timeoutMs: 60_000,
      },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.tail()}`);
    });
    // StopPodSandbox on the dead sandbox ran CNI DEL: its IP is free again (container GC would only come a minute later).
    await pollUntil('the dead sandbox IP released', async () => !existsSync(ipFile), { timeoutMs: 15_000 });
  });
  it('activeDeadlineSeconds: the pod fails with DeadlineExceeded and its containers are killed', async () => {
    agent.writeManifest('deadline', manifest('deadline', [{ name: 'app', command: SLEEP }], { activeDeadlineSeconds: 4 }));
    await waitPod('running', 'deadline', (p) => cs(p, 'app')?.state?.running);
    const p = await waitPod('Failed with DeadlineExceeded', 'deadline', (x) => x.status?.phase === 'Failed' && x, 60_000);
    expect(p.status).toMatchObject({
      reason: 'DeadlineExceeded',
      message: 'Pod was active on the node longer than the specified deadline',
    });
    await pollUntil(
      'the app container stopped',
      async () => (await containersOf('deadline')).every((c) => c.state === ContainerState.CONTAINER_EXITED),
      {
        timeoutMs: 30_000,
      },
    );
    await pollUntil(
      'the sandbox stopped',
      async () => (await sandboxesOf('deadline')).every((b) => b.state === PodSandboxState.SANDBOX_NOTREADY),
      {
        timeoutMs: 30_000,
      },
    );
  });
  it('admission: a second pod asking for a hostPort in use is rejected (NodePorts); the first keeps running', async () => {
    const withPort = (name: string) =>
      manifest(name, [
        {
          name: 'app',
          command: SLEEP,
          ports: [{ containerPort: 8080, hostPort: 18080 + Number(run.charCodeAt(0) % 50), protocol: 'TCP' }],
        },
      ]);
    agent.writeManifest('port1', withPort('port1'));
    await waitPod('running', 'port1', (p) => cs(p, 'app')?.state?.running);
    agent.writeManifest('port2', withPort('port2'));
    const p2 = await waitPod('rejected', 'port2', (p) => p.status?.phase === 'Failed' && p, 60_000);
    expect(p2.status).toMatchObject({
      reason: 'NodePorts',
      message: "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    });
    expect(await containersOf('port2')).toEqual([]);
    expect(cs(await agent.pod('port1'), 'app')?.state?.running).toBeTruthy();
  });
});
