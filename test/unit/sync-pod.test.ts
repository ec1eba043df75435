import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import type { PodStatus } from '../../src/runtime/types.js';
import { killPod } from '../../src/workers/sync/kill-pod.js';
import { syncPod, terminatePod } from '../../src/workers/sync/sync-pod.js';
import { PresentImages } from '../../src/workers/sync/present-images.js';
import { c, container, harness, logsRoot, makePod, podStatus, sandbox } from '../helpers/sync-fixtures.js';

describe('syncPod: a new sandbox purges the init containers of the old one (upstream purgeInitContainers)', () => {
  it('stops every sandbox, removes every init container instance, then starts the first init container in the new sandbox', async () => {
    const pod = makePod({ initContainers: [c('init1'), c('init2')], containers: [c('app')] });
    const status = podStatus(
      pod,
      [sandbox('sb-old', 'notready', 0)],
      [container(pod, 'init1', 'exited'), container(pod, 'init2', 'exited'), container(pod, 'app', 'exited', { exitCode: 137 })],
    );
    const { cri, ctx, input } = harness(status);
    const result = await syncPod(ctx, input(pod));
    expect(result.error).toBeUndefined();
    expect(cri.callsOf('stopPodSandbox')).toEqual([{ podSandboxId: 'sb-old' }]);
    expect(cri.callsOf('removeContainer').map((r) => r.containerId)).toEqual(
      status.containerStatuses.filter((x) => x.name.startsWith('init')).map((x) => x.id),
    );
    const order = cri.methods().filter((m) => ['stopPodSandbox', 'removeContainer', 'runPodSandbox', 'createContainer'].includes(m));
    expect(order).toEqual(['stopPodSandbox', 'removeContainer', 'removeContainer', 'runPodSandbox', 'createContainer']);
    const created = cri.callsOf('createContainer')[0] as { config: { metadata: { name: string } } };
    expect(created.config.metadata.name).toBe('init1');
  });

  it('prunes all but the newest exited instance of each init container before starting', async () => {
    const pod = makePod({ initContainers: [c('init1')], containers: [c('app')] });
    const old = container(pod, 'init1', 'exited', { exitCode: 1 });
    const newer = container(pod, 'init1', 'exited', { exitCode: 1, sandboxId: 'sb-1' });
    const status = podStatus(pod, [sandbox('sb-1', 'ready')], [old, newer]);
    const { cri, ctx, input } = harness(status);
    await syncPod(ctx, input(pod));
    expect(cri.callsOf('removeContainer').map((r) => r.containerId)).toEqual([old.id]);
  });
});

describe('syncPod says whether it acted (the PLEG relists early after a sync that did)', () => {
  it('a sync that creates the sandbox and starts the container acted; one with nothing to do did not', async () => {
    const pod = makePod({ containers: [c('app')] });
    const fresh = harness(podStatus(pod, [], []));
    expect((await syncPod(fresh.ctx, fresh.input(pod))).acted).toBe(true);
    const steady = harness(podStatus(pod, [sandbox('sb-1', 'ready')], [container(pod, 'app', 'running', { sandboxId: 'sb-1' })]));
    const result = await syncPod(steady.ctx, steady.input(pod));
    expect(result.error).toBeUndefined();
    expect(result.acted).toBe(false);
    expect(steady.cri.callsOf('startContainer')).toHaveLength(0);
  });
});

describe('killPod stops every sandbox (upstream killPodWithSyncResult)', () => {
  it('a sandbox that died on its own is stopped too (CNI teardown), and nothing is removed', async () => {
    const pod = makePod({ containers: [c('app')] });
    const status = podStatus(pod, [sandbox('sb-2', 'ready', 1), sandbox('sb-1', 'notready', 0)], [container(pod, 'app', 'running')]);
    const { cri, ctx } = harness(status);
    const r = await killPod(ctx, pod, status, 5);
    expect(r.error).toBeUndefined();
    expect(cri.callsOf('stopPodSandbox').map((x) => x.podSandboxId)).toEqual(['sb-2', 'sb-1']);
    expect(cri.methods()).not.toContain('removePodSandbox');
    expect(cri.methods()).not.toContain('removeContainer');
  });

  it('reports a failed sandbox stop after attempting every step', async () => {
    const pod = makePod({ containers: [c('app')] });
    const status = podStatus(pod, [sandbox('sb-2', 'ready', 1), sandbox('sb-1', 'notready', 0)], [container(pod, 'app', 'running')]);
    const { cri, ctx } = harness(status);
    cri.handlers.stopPodSandbox = async (r) => {
      if (r.podSandboxId === 'sb-1') throw new Error('cni teardown failed');
      return {};
    };
    const r = await killPod(ctx, pod, status, 5);
    expect(r.error).toContain('cni teardown failed');
    expect(cri.callsOf('stopPodSandbox')).toHaveLength(2);
    expect(cri.callsOf('stopContainer')).toHaveLength(1);
  });
});

describe('sidecars in syncPod', () => {
  it('start in spec order in one sync; a sidecar that fails to start does not stop the next one', async () => {
    const pod = makePod({
      initContainers: [c('side1', { restartPolicy: 'Always', image: '127.0.0.1:1/none:1' }), c('side2', { restartPolicy: 'Always' })],
      containers: [c('app')],
    });
    const status = podStatus(pod, [sandbox('sb-1', 'ready')], [container(pod, 'app', 'running', { sandboxId: 'sb-1' })]);
    const { cri, ctx, input } = harness(status);
    const r = await syncPod(ctx, input(pod));
    expect(r.reasons['side1']?.reason).toBe('ErrImagePull');
    expect((cri.callsOf('createContainer') as { config: { metadata: { name: string } } }[]).map((x) => x.config.metadata.name)).toEqual([
      'side2',
    ]);
  });

  it('stop after the app containers, the later sidecar first (termination order)', async () => {
    const pod = makePod({
      initContainers: [c('side1', { restartPolicy: 'Always' }), c('side2', { restartPolicy: 'Always' })],
      containers: [c('app')],
    });
    const status = podStatus(
      pod,
      [sandbox('sb-1', 'ready')],
      [container(pod, 'side1', 'running'), container(pod, 'side2', 'running'), container(pod, 'app', 'running')],
    );
    const { cri, ctx } = harness(status);
    await killPod(ctx, pod, status, 30);
    const stopped = cri.callsOf('stopContainer').map((x) => String(x.containerId).split('-')[0]);
    expect(stopped).toEqual(['app', 'side2', 'side1']);
  });
});

describe('container config errors (upstream ErrCreateContainerConfig)', () => {
  it('an env source the kubelet cannot resolve is CreateContainerConfigError and nothing is created', async () => {
    const pod = makePod({
      containers: [c('app', { env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }] })],
    });
    const status = podStatus(pod, [sandbox('sb-1', 'ready')], []);
    const { cri, ctx, input } = harness(status);
    const r = await syncPod(ctx, input(pod));
    expect(r.reasons['app']?.reason).toBe('CreateContainerConfigError');
    expect(r.reasons['app']?.message).toContain('secretKeyRef db/password');
    expect(cri.methods()).not.toContain('createContainer');
    expect(r.events.find((e) => e.reason === 'Failed')?.message).toMatch(/^Error: .*secretKeyRef db\/password/);
  });

  it('a runtime CreateContainer failure is CreateContainerError with the gRPC status message only', async () => {
    const pod = makePod({ containers: [c('app')] });
    const status = podStatus(pod, [sandbox('sb-1', 'ready')], []);
    const { cri, ctx, input } = harness(status);
    const { CriError } = await import('../../src/common/errors.js');
    cri.handlers.createContainer = async () => {
      const cause = Object.assign(new Error('x'), { code: 2, details: 'failed to create containerd container: boom' });
      throw new CriError(
        'create_container: rpc error: code = Unknown desc = failed to create containerd container: boom',
        'create_container',
        2,
        {
          cause,
        },
      );
    };
    const presentImages = new PresentImages();
    const r = await syncPod({ ...ctx, presentImages }, input(pod));
    expect(r.reasons['app']).toEqual({ reason: 'CreateContainerError', message: 'failed to create containerd container: boom' });
    // The image was found present just before: the failure clears that, so the retry asks the runtime again.
    expect(cri.callsOf('imageStatus').length).toBe(1);
    await syncPod({ ...ctx, presentImages }, input(pod));
    expect(cri.callsOf('imageStatus').length).toBe(2);
  });
});

describe('a subPath that escapes its volume (upstream makeMounts keeps host paths out of the status)', () => {
  it('CreateContainerConfigError with a message naming only the volumeMount and container; the detail goes to hiddenDetails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-sp-'));
    try {
      mkdirSync(join(dir, 'vol'));
      symlinkSync('/etc', join(dir, 'vol/escape'));
      const pod = makePod({ containers: [c('app', { volumeMounts: [{ name: 'data', mountPath: '/x', subPath: 'escape' }] })] });
      const { cri, ctx, input } = harness(podStatus(pod, [sandbox('sb-1', 'ready')], []));
      const r = await syncPod(ctx, {
        ...input(pod),
        volumes: { data: { path: join(dir, 'vol'), readOnly: false } },
        podDir: join(dir, 'pod'),
      });
      const message = 'failed to prepare subPath for volumeMount "data" of container "app"';
      expect(r.reasons['app']).toEqual({ reason: 'CreateContainerConfigError', message });
      expect(r.events.find((e) => e.reason === 'Failed')?.message).toBe(`Error: ${message}`);
      expect(r.error).not.toContain(dir);
      expect(r.hiddenDetails).toEqual([{ message, detail: `subpath "/etc" not within volume path ${JSON.stringify(join(dir, 'vol'))}` }]);
      expect(cri.methods()).not.toContain('createContainer');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a sync whose only failures are running backoffs (upstream syncPod returns nil for them)', () => {
  it('ErrImagePull is an error; the ImagePullBackOff that follows is backoffOnly; with another failure beside it, it is not', async () => {
    const pod = makePod({ containers: [c('app', { image: 'docker.io/kubelet-ts/missing:1.0' })] });
    const h = harness(podStatus(pod, [sandbox('sb-1', 'ready')], []));
    const first = await syncPod(h.ctx, h.input(pod));
    expect([first.reasons['app']?.reason, first.error !== undefined, first.backoffOnly]).toEqual(['ErrImagePull', true, undefined]);
    const second = await syncPod(h.ctx, { ...h.input(pod), backoff: first.backoff });
    expect([second.reasons['app']?.reason, second.error !== undefined, second.backoffOnly]).toEqual(['ImagePullBackOff', true, true]);

    const both = makePod({
      containers: [
        c('app', { image: 'docker.io/kubelet-ts/missing:1.0' }),
        c('env', { env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'db', key: 'p' } } }] }),
      ],
    });
    const h2 = harness(podStatus(both, [sandbox('sb-1', 'ready')], []));
    const r1 = await syncPod(h2.ctx, h2.input(both));
    const r2 = await syncPod(h2.ctx, { ...h2.input(both), backoff: r1.backoff });
    expect([r2.reasons['app']?.reason, r2.reasons['env']?.reason, r2.backoffOnly]).toEqual([
      'ImagePullBackOff',
      'CreateContainerConfigError',
      undefined,
    ]);
  });
});

describe('restartCount from the log directory (upstream calcRestartCountByLogDir)', () => {
  it('continues after the highest <n>.log when the runtime lost every instance', async () => {
    const pod = makePod({ containers: [c('app')] }, 'logs');
    const dir = join(logsRoot, `default_logs_uid-logs`, 'app');
    mkdirSync(dir, { recursive: true });
    for (const f of ['0.log', '3.log', '4.log.20260101-000000', 'notes.txt']) writeFileSync(join(dir, f), '');
    const status = podStatus(pod, [], []);
    const { cri, ctx, input } = harness(status);
    await syncPod(ctx, input(pod));
    const created = cri.callsOf('createContainer')[0] as { config: { metadata: { attempt: number }; logPath: string } };
    expect(created.config.metadata.attempt).toBe(5);
    expect(created.config.logPath).toBe('app/5.log');
  });

  it('does not when the pod has a sandbox listed: a container a truncated list left out gets attempt 0, as upstream v1.20.2', async () => {
    // Regression (runtime-slow-steady-sim): the running instance 0 was missing from a truncated ListContainers;
    // attempt 1 from 0.log made a second running instance, where attempt 0 is refused by the name reservation.
    const pod = makePod({ containers: [c('app')] }, 'hidden');
    const dir = join(logsRoot, `default_hidden_uid-hidden`, 'app');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '0.log'), '');
    const { cri, ctx, input } = harness(podStatus(pod, [sandbox('sb-1', 'ready')], []));
    await syncPod(ctx, input(pod));
    const created = cri.callsOf('createContainer')[0] as { config: { metadata: { attempt: number }; logPath: string } };
    expect(created.config.metadata.attempt).toBe(0);
    expect(created.config.logPath).toBe('app/0.log');
  });
});

describe('the pod log directory (upstream createPodSandbox)', () => {
  it('one that cannot be made fails the sandbox with an event naming the directory, the path and the cause', async () => {
    const pod = makePod({ containers: [c('app')] }, 'blocked');
    const dir = join(logsRoot, 'default_blocked_uid-blocked');
    writeFileSync(dir, '');
    const { cri, ctx, input } = harness(podStatus(pod, [], []));
    const result = await syncPod(ctx, input(pod));
    const message = `Failed to create pod sandbox: cannot create the pod log directory ${dir}: file already exists (EEXIST)`;
    expect(result.error).toBe(message);
    expect(result.events).toContainEqual({ type: 'Warning', reason: 'FailedCreatePodSandBox', message });
    expect(cri.methods()).not.toContain('runPodSandbox');
  });
});

describe('lifecycle hooks', () => {
  it('postStart failure: FailedPostStartHook event, the container is killed, waiting reason PostStartHookError', async () => {
    const pod = makePod({ containers: [c('app', { lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 3'] } } } })] });
    const status = podStatus(pod, [sandbox('sb-1', 'ready')], []);
    const { cri, ctx, input } = harness(status);
    cri.handlers.execSync = async () => ({ exitCode: 3, stdout: Buffer.from('out'), stderr: Buffer.from('bad') });
    const r = await syncPod(ctx, input(pod));
    expect(r.events.map((e) => e.reason)).toEqual(['Pulled', 'Created', 'Started', 'FailedPostStartHook', 'Killing']);
    expect(r.events.find((e) => e.reason === 'Killing')?.message).toBe('FailedPostStartHook');
    expect(r.reasons['app']?.reason).toBe('PostStartHookError');
    expect(r.reasons['app']?.message).toBe(
      `Exec lifecycle hook ([sh -c exit 3]) for Container "app" in Pod "web_default(uid-web)" failed - error: command 'sh -c exit 3' exited with 3: bad, message: "outbad"`,
    );
    expect(cri.methods().slice(-3)).toEqual(['startContainer', 'execSync', 'stopContainer']);
  });

  it('preStop runs before StopContainer and the time it took comes off the grace period', async () => {
    const pod = makePod({ containers: [c('app', { lifecycle: { preStop: { exec: { command: ['sleep', '3'] } } } })] });
    const status = podStatus(pod, [sandbox('sb-1', 'ready')], [container(pod, 'app', 'running')]);
    const { cri, ctx, clock } = harness(status);
    cri.handlers.execSync = async () => {
      clock.step(3_000);
      return { exitCode: 0, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
    };
    await killPod(ctx, pod, status, 10);
    expect(cri.methods()).toEqual(['execSync', 'stopContainer', 'stopPodSandbox']);
    expect(cri.callsOf('stopContainer')[0].timeout).toBe(7n);
  });

  it('a preStop hook that outlasts the grace period is abandoned; the container still gets 2 s', async () => {
    const pod = makePod({ containers: [c('app', { lifecycle: { preStop: { exec: { command: ['sleep', '999'] } } } })] });
    const status = podStatus(pod, [sandbox('sb-1', 'ready')], [container(pod, 'app', 'running')]);
    const { cri, ctx, clock } = harness(status);
    cri.handlers.execSync = () => {
      queueMicrotask(() => clock.step(10_000));
      return new Promise(() => {});
    };
    await killPod(ctx, pod, status, 10);
    expect(cri.callsOf('stopContainer')[0].timeout).toBe(2n);
  });

  it('an orphan (no spec) has its preStop handler and grace period restored from the container annotations', async () => {
    const placeholder: Pod = { metadata: { uid: 'uid-o', name: 'o', namespace: 'default' }, spec: { containers: [] } };
    const status: PodStatus = {
      uid: 'uid-o',
      name: 'o',
      namespace: 'default',
      ips: ['10.1.0.5'],
      sandboxStatuses: [sandbox('sb-1', 'ready')],
      containerStatuses: [{ ...container(makePod({ containers: [c('app')] }), 'app', 'running'), id: 'orphan-1' }],
      timestamp: 0,
    };
    const { cri, ctx } = harness(status);
    cri.handlers.containerStatus = async () => ({
      status: {
        annotations: {
          'io.kubernetes.container.preStopHandler': JSON.stringify({ exec: { command: ['true'] } }),
          'io.kubernetes.pod.terminationGracePeriod': '12',
        },
      },
    });
    await killPod(ctx, placeholder, status);
    expect(cri.methods()).toEqual(['containerStatus', 'execSync', 'stopContainer', 'stopPodSandbox']);
    expect(cri.callsOf('stopContainer')[0].timeout).toBe(12n);
  });
});

describe('terminatePod returns the status read after the stop (upstream re-read after KillPod)', () => {
  it('the final status has no running container and no ready sandbox', async () => {
    const pod = makePod({ containers: [c('app')] });
    const running = podStatus(pod, [sandbox('sb-1', 'ready')], [container(pod, 'app', 'running', { sandboxId: 'sb-1' })]);
    const { cri, runtime, ctx } = harness(running);
    cri.handlers.stopPodSandbox = async () => {
      const stopped = structuredClone(running);
      stopped.sandboxStatuses[0].state = 'notready';
      stopped.containerStatuses[0].state = 'exited';
      stopped.containerStatuses[0].exitCode = 143;
      runtime.statuses.set(running.uid, stopped);
      return {};
    };
    const r = await terminatePod(ctx, { pod, slot: -1, minTimestamp: 0, cacheUnreliable: true, gracePeriodSeconds: 5, remove: false });
    expect(r.status.sandboxStatuses.map((s) => s.state)).toEqual(['notready']);
    expect(r.status.containerStatuses.map((s) => [s.state, s.exitCode])).toEqual([['exited', 143]]);
  });

  const base = { minTimestamp: 1000, cacheUnreliable: false, gracePeriodSeconds: 5, remove: false };
  /** A pod with one running container in a ready sandbox, and its cache slot; `stops`: stopping the sandbox stops both in the fake runtime. */
  function runningPod({ stops }: { stops: boolean }) {
    const pod = makePod({ containers: [c('app')] });
    const running = podStatus(pod, [sandbox('sb-1', 'ready')], [container(pod, 'app', 'running', { sandboxId: 'sb-1' })]);
    const h = harness(running);
    if (stops) {
      h.cri.handlers.stopPodSandbox = async () => {
        h.runtime.statuses.set(running.uid, stoppedCopy(running));
        return {};
      };
    }
    return { pod, running, ...h, slot: h.cache.allocate(pod.metadata.uid!) };
  }

  it.each([
    {
      name: 'a cached status newer than the last sync: stops what it lists, reads the runtime only after',
      cachedAt: 2000,
      unreliable: false,
      reads: 1,
    },
    { name: 'a cached status older than the last sync: reads the runtime before and after', cachedAt: 500, unreliable: false, reads: 2 },
    { name: 'a failed inspection (cache unreliable): reads the runtime before and after', cachedAt: 2000, unreliable: true, reads: 2 },
  ])('$name', async ({ cachedAt, unreliable, reads }) => {
    const { pod, running, cri, runtime, ctx, cache, slot } = runningPod({ stops: true });
    cache.write(slot, { ...running, timestamp: cachedAt });
    const r = await terminatePod(ctx, { ...base, pod, slot, cacheUnreliable: unreliable });
    expect(runtime.calls.getPodStatus).toHaveLength(reads);
    expect(cri.callsOf('stopContainer').map((x) => x.containerId)).toEqual([running.containerStatuses[0].id]);
    expect(cri.callsOf('stopPodSandbox').map((x) => x.podSandboxId)).toEqual(['sb-1']);
    expect(r.stoppedContainers).toBe(1);
  });

  it('reads the stopped pod again by the ids it stopped, without listing the runtime', async () => {
    const { pod, running, runtime, ctx, cache, slot } = runningPod({ stops: true });
    cache.write(slot, { ...running, timestamp: 2000 });
    const r = await terminatePod(ctx, { ...base, pod, slot });
    expect(runtime.calls.known).toEqual([
      { sandboxes: [{ id: 'sb-1' }], containers: [{ id: running.containerStatuses[0].id, sandboxId: 'sb-1' }] },
    ]);
    expect(r.status.containerStatuses.map((x) => [x.state, x.exitCode])).toEqual([['exited', 143]]);
  });

  it('a fresh cached status that lags the runtime: stops what the read after the kill still shows running', async () => {
    const { pod, running, cri, runtime, ctx, cache, slot } = runningPod({ stops: true });
    cache.write(slot, { ...podStatus(pod, [], []), timestamp: 2000 });
    const r = await terminatePod(ctx, { ...base, pod, slot });
    expect(cri.callsOf('stopContainer').map((x) => x.containerId)).toEqual([running.containerStatuses[0].id]);
    expect(cri.callsOf('stopPodSandbox').map((x) => x.podSandboxId)).toEqual(['sb-1']);
    expect(r.stoppedContainers).toBe(1);
    expect(r.status.containerStatuses.map((x) => x.state)).toEqual(['exited']);
    expect(runtime.calls.getPodStatus).toHaveLength(2);
    // Nothing to stop in the cached status: the read after the kill lists the runtime.
    expect(runtime.calls.known[0]).toBeUndefined();
  });

  it('a container still running after the second kill fails the termination (the pod worker retries)', async () => {
    const { pod, running, ctx, cache, slot } = runningPod({ stops: false });
    cache.write(slot, { ...running, timestamp: 2000 });
    await expect(terminatePod(ctx, { ...base, pod, slot })).rejects.toThrow(/detected running containers after a successful KillPod.*app/);
  });
});

/** `status` after its pod was stopped: sandboxes not ready, containers exited. */
function stoppedCopy(status: PodStatus): PodStatus {
  const stopped = structuredClone(status);
  for (const s of stopped.sandboxStatuses) s.state = 'notready';
  for (const x of stopped.containerStatuses) Object.assign(x, { state: 'exited', exitCode: 143 });
  return stopped;
}

describe('syncPod: container env', () => {
  it('a resourceFieldRef to a limit the container does not set reads the node allocatable (upstream MergeContainerResourceLimits)', async () => {
    const app = {
      ...c('app'),
      env: [
        { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '0' } } },
        { name: 'MEM_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      ],
    };
    const pod = makePod({ containers: [app] });
    const { cri, ctx, input } = harness(podStatus(pod, [sandbox('sb-1', 'ready')], []));
    const result = await syncPod(ctx, input(pod));
    expect(result.error).toBeUndefined();
    const created = cri.callsOf('createContainer')[0] as { config: { envs: { key: string; value: Buffer | string }[] } };
    const env = Object.fromEntries(created.config.envs.map((e) => [e.key, String(e.value)]));
    expect(env).toMatchObject({ CPU_LIMIT: '2', MEM_LIMIT: String(7 * 1024) });
  });
});

describe('syncPod: the pod cgroup and cpuCFSQuota reach the runtime', () => {
  const limited = () => makePod({ containers: [c('app', { resources: { limits: { cpu: '200m', memory: '64Mi' } } })] });

  it('the cgroupParent of the input is the sandbox cgroup_parent; without it the runtime chooses', async () => {
    const pod = limited();
    const h = harness(podStatus(pod, [], []));
    await syncPod(h.ctx, { ...h.input(pod), cgroupParent: '/kts/kubepods/podu1' });
    const run = h.cri.callsOf('runPodSandbox')[0] as { config: { linux: { cgroupParent: string } } };
    expect(run.config.linux.cgroupParent).toBe('/kts/kubepods/podu1');
    const plain = harness(podStatus(pod, [], []));
    await syncPod(plain.ctx, plain.input(pod));
    expect((plain.cri.callsOf('runPodSandbox')[0] as { config: { linux: { cgroupParent: string } } }).config.linux.cgroupParent).toBe('');
  });

  it.each<[boolean | undefined, bigint | undefined]>([
    [undefined, 20_000n],
    [true, 20_000n],
    [false, undefined],
  ])('cpuCFSQuota %s: the container quota is %s', async (cpuCFSQuota, quota) => {
    const pod = limited();
    const h = harness(podStatus(pod, [], []));
    const input = h.input(pod);
    await syncPod(h.ctx, { ...input, node: { ...input.node, ...(cpuCFSQuota !== undefined && { cpuCFSQuota }) } });
    const created = h.cri.callsOf('createContainer')[0] as { config: { linux: { resources: { cpuQuota?: bigint } } } };
    expect(created.config.linux.resources.cpuQuota).toBe(quota);
  });
});
