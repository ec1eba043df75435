import { describe, expect, it } from 'vitest';
import { ContainerState, PodSandboxState } from '../../src/gen/runtime/v1/api.js';
import { ANNOTATION_CONTAINER_HASH } from '../../src/runtime/types.js';
import { CriRuntime } from '../../src/runtime/cri-runtime.js';
import { syncPod } from '../../src/workers/sync/sync-pod.js';
import { c, container, harness, makePod, podStatus, sandbox } from '../helpers/sync-fixtures.js';

describe('syncPod publishes the sandbox it created in the pod status cache', () => {
  it('with the IPs it read, timestamped before the sync ends, so the relist reuses it but the next sync does not trust it', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { cri, ctx, clock, input } = harness(podStatus(pod, [], []));
    cri.handlers.podSandboxStatus = async (r) => ({
      status: { id: r.podSandboxId, state: PodSandboxState.SANDBOX_READY, createdAt: 7n, network: { ip: '10.1.0.9', additionalIps: [] } },
    });
    const i = input(pod);
    clock.step(1000);
    const result = await syncPod(ctx, i);
    expect(result.error).toBeUndefined();
    const created = cri.callsOf('createContainer')[0] as { podSandboxId: string };
    const cached = ctx.cache.read(i.slot, pod.metadata.uid);
    expect(cached?.sandboxStatuses).toEqual([expect.objectContaining({ id: created.podSandboxId, state: 'ready', ips: ['10.1.0.9'] })]);
    expect(cached?.ips).toEqual(['10.1.0.9']);
    expect(cached?.timestamp).toBe(clock.now());
    clock.step(1); // the sync's end (PoolSyncer lastSyncEnd) is after the write
    expect(ctx.cache.isNewerThan(i.slot, clock.now())).toBe(false);
  });

  it('keeps an entry written while it created the sandbox (an inspection that saw more than the status the sync started from)', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { cri, ctx, clock, input } = harness(podStatus(pod, [], []));
    const i = input(pod);
    cri.handlers.podSandboxStatus = async (r) => {
      ctx.cache.write(i.slot, { ...podStatus(pod, [sandbox('sb-seen', 'ready')], []), timestamp: clock.now() });
      clock.step(10);
      return {
        status: { id: r.podSandboxId, state: PodSandboxState.SANDBOX_READY, createdAt: 7n, network: { ip: '10.1.0.9', additionalIps: [] } },
      };
    };
    await syncPod(ctx, i);
    expect(ctx.cache.read(i.slot, pod.metadata.uid)?.sandboxStatuses.map((x) => x.id)).toEqual(['sb-seen']);
  });

  it('never replaces a newer entry', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { ctx, clock, input } = harness(podStatus(pod, [], []));
    const i = input(pod);
    const newer = podStatus(pod, [sandbox('sb-newer', 'ready')], []);
    ctx.cache.write(i.slot, { ...newer, timestamp: clock.now() + 60_000 });
    await syncPod(ctx, i);
    expect(ctx.cache.read(i.slot, pod.metadata.uid)?.sandboxStatuses.map((x) => x.id)).toEqual(['sb-newer']);
  });
});

describe('syncPod publishes the containers it started in the pod status cache', () => {
  const readySandbox = async (r: Record<string, unknown>) => ({
    status: { id: r.podSandboxId, state: PodSandboxState.SANDBOX_READY, createdAt: 7n, network: { ip: '10.1.0.9', additionalIps: [] } },
  });
  const running = (id: string, hash: string) => ({
    status: {
      id,
      state: ContainerState.CONTAINER_RUNNING,
      createdAt: 5n,
      startedAt: 6n,
      finishedAt: 0n,
      exitCode: 0,
      reason: '',
      message: '',
      metadata: { name: 'app', attempt: 0 },
      image: { image: 'docker.io/kubelet-ts/busybox:1.0', annotations: {}, userSpecifiedImage: '' },
      imageRef: 'sha256:abc',
      annotations: { [ANNOTATION_CONTAINER_HASH]: hash },
      labels: {},
      logPath: '',
    },
  });

  it('read once as running, on top of its sandbox, before the sync ends; the relist that lists it running reads nothing again', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { cri, ctx, clock, input } = harness(podStatus(pod, [], []));
    const hash = container(pod, 'app', 'running').hash;
    cri.handlers.podSandboxStatus = readySandbox;
    cri.handlers.containerStatus = async (r) => running(String(r.containerId), hash);
    const i = input(pod);
    clock.step(1000);
    const result = await syncPod(ctx, i);
    expect(result.error).toBeUndefined();
    const sandboxId = (cri.callsOf('createContainer')[0] as { podSandboxId: string }).podSandboxId;
    const created = cri.callsOf('createContainer').length;
    expect(created).toBe(1);
    const cached = ctx.cache.read(i.slot, pod.metadata.uid)!;
    expect(cached.sandboxStatuses.map((s) => s.id)).toEqual([sandboxId]);
    expect(cached.containerStatuses).toEqual([
      expect.objectContaining({ name: 'app', state: 'running', startedAt: 6n, imageRef: 'sha256:abc', hash, sandboxId }),
    ]);
    expect(cri.callsOf('containerStatus')).toHaveLength(1);
    clock.step(1); // the sync's end (PoolSyncer lastSyncEnd) is after the write
    expect(ctx.cache.isNewerThan(i.slot, clock.now())).toBe(false);

    // The relist's inspection by the listed ids and states reuses the entry.
    const containerId = cached.containerStatuses[0].id;
    const relisted = await new CriRuntime(cri.api, clock).getPodStatus(
      pod.metadata.uid!,
      'web',
      'default',
      { sandboxes: [{ id: sandboxId, state: 'ready' }], containers: [{ id: containerId, sandboxId, state: 'running' }] },
      cached,
    );
    expect(relisted.containerStatuses.map((s) => s.state)).toEqual(['running']);
    expect(cri.callsOf('containerStatus')).toHaveLength(1);
    expect(cri.callsOf('podSandboxStatus')).toHaveLength(1);
  });

  it('leaves a container that already exited to the relist (its inspection adds the termination message)', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { cri, ctx, input } = harness(podStatus(pod, [], []));
    const hash = container(pod, 'app', 'running').hash;
    cri.handlers.podSandboxStatus = readySandbox;
    cri.handlers.containerStatus = async (r) => {
      const s = running(String(r.containerId), hash);
      return { status: { ...s.status, state: ContainerState.CONTAINER_EXITED, finishedAt: 7n, exitCode: 1 } };
    };
    const i = input(pod);
    await syncPod(ctx, i);
    expect(cri.callsOf('containerStatus')).toHaveLength(1);
    const cached = ctx.cache.read(i.slot, pod.metadata.uid)!;
    expect(cached.sandboxStatuses).toHaveLength(1);
    expect(cached.containerStatuses).toEqual([]);
  });

  it('publishes nothing after a kill (the status it would build on still shows the stopped container running)', async () => {
    const pod = makePod({ containers: [c('app')] });
    const old = container(pod, 'app', 'running', { sandboxId: 'sb-1', hash: 'outdated' });
    const { cri, ctx, input } = harness(podStatus(pod, [sandbox('sb-1', 'ready')], [old]));
    cri.handlers.containerStatus = async (r) => running(String(r.containerId), container(pod, 'app', 'running').hash);
    const i = input(pod);
    const result = await syncPod(ctx, i);
    expect(result.error).toBeUndefined();
    expect(cri.callsOf('stopContainer').map((r) => r.containerId)).toEqual([old.id]);
    expect(cri.callsOf('startContainer')).toHaveLength(1);
    expect(ctx.cache.read(i.slot, pod.metadata.uid)).toBeUndefined();
  });

  it('adds the container to an entry an inspection wrote while the sync read it, and keeps what that entry has', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { cri, ctx, clock, input } = harness(podStatus(pod, [], []));
    const i = input(pod);
    const hash = container(pod, 'app', 'running').hash;
    let written = 0;
    cri.handlers.containerStatus = async (r) => {
      clock.step(10);
      written = clock.now();
      // The inspection listed the container before it started: created.
      const listed = container(pod, 'app', 'created', { id: String(r.containerId), sandboxId: 'sb-seen' });
      ctx.cache.write(i.slot, { ...podStatus(pod, [sandbox('sb-seen', 'ready')], [listed]), timestamp: written });
      return running(String(r.containerId), hash);
    };
    await syncPod(ctx, i);
    const cached = ctx.cache.read(i.slot, pod.metadata.uid)!;
    expect(cached.sandboxStatuses.map((x) => x.id)).toEqual(['sb-seen']);
    expect(cached.containerStatuses.map((x) => x.state)).toEqual(['running']);
    expect(cached.timestamp).toBe(written);
  });

  it('never replaces a container an entry already shows in a later state (exited)', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { cri, ctx, clock, input } = harness(podStatus(pod, [], []));
    const i = input(pod);
    const hash = container(pod, 'app', 'running').hash;
    cri.handlers.containerStatus = async (r) => {
      clock.step(10);
      const exited = container(pod, 'app', 'exited', { id: String(r.containerId), exitCode: 2 });
      ctx.cache.write(i.slot, { ...podStatus(pod, [sandbox('sb-seen', 'ready')], [exited]), timestamp: clock.now() });
      return running(String(r.containerId), hash);
    };
    await syncPod(ctx, i);
    expect(ctx.cache.read(i.slot, pod.metadata.uid)!.containerStatuses.map((x) => [x.state, x.exitCode])).toEqual([['exited', 2]]);
  });

  it('does not read a container the cache already shows running (a relist read it first)', async () => {
    const pod = makePod({ containers: [c('app')] });
    const { cri, ctx, clock, input } = harness(podStatus(pod, [], []));
    const i = input(pod);
    cri.handlers.podSandboxStatus = readySandbox;
    cri.handlers.startContainer = async (r) => {
      clock.step(10);
      const seen = container(pod, 'app', 'running', { id: String(r.containerId), sandboxId: 'sb-1' });
      ctx.cache.write(i.slot, { ...podStatus(pod, [sandbox('sb-1', 'ready')], [seen]), timestamp: clock.now() });
      return {};
    };
    await syncPod(ctx, i);
    expect(cri.callsOf('containerStatus')).toHaveLength(0);
    expect(ctx.cache.read(i.slot, pod.metadata.uid)!.containerStatuses.map((x) => x.state)).toEqual(['running']);
  });
});
