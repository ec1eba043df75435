import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { silentLogger } from '../../src/common/logger.js';
import type { EventRecorder } from '../../src/main/events/event-recorder.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import { PoolSyncer } from '../../src/main/kubelet/pool-syncer.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import { PodStatusCache } from '../../src/shared/pod-status-cache.js';
import type { SyncPodInput } from '../../src/pod/sync-types.js';
import type { TaskRunner } from '../../src/workers/task-runner.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeVolumeManager } from '../fakes/fake-volume-manager.js';

const pod: Pod = { metadata: { uid: 'u1', name: 'web', namespace: 'ns' }, spec: { containers: [{ name: 'app', image: 'i' }] } };

function setup(extra: Partial<ConstructorParameters<typeof PoolSyncer>[0]> = {}) {
  const inputs: SyncPodInput[] = [];
  const tasks: string[] = [];
  const runner = {
    threads: 0,
    close: async () => undefined,
    run: async (req: { type: string; input?: SyncPodInput }) => {
      tasks.push(req.type);
      if (req.type === 'syncPod') inputs.push(req.input!);
      return req.type === 'syncPod'
        ? { plan: '', reasons: {}, backoff: {}, events: [] }
        : { stoppedContainers: 0, stoppedSandboxes: 0, removed: true, events: [] };
    },
  } as unknown as TaskRunner;
  const events: string[] = [];
  const recorder: EventRecorder = { record: (_ref, type, reason, message) => events.push(`${type} ${reason} ${message}`) };
  const volumes = new FakeVolumeManager();
  const podManager = new PodManager();
  const clock = new FakeClock();
  const statusManager = new StatusManager(() => clock.now());
  const syncer = new PoolSyncer({
    runner,
    cache: PodStatusCache.create({ capacity: 4 }),
    podManager,
    statusManager,
    node: {
      name: 'n',
      ip: '10.0.0.1',
      podLogsDir: '/logs',
      containerLogsDir: '',
      clusterDNS: [],
      clusterDomain: 'cluster.local',
      resolvConf: '',
      memoryCapacityBytes: 1,
    },
    clock,
    logger: silentLogger(),
    recorder,
    networkError: () => undefined,
    volumes,
    ...extra,
  });
  return { syncer, volumes, inputs, tasks, events, podManager, statusManager };
}

describe('PoolSyncer and the volume manager (upstream WaitForAttachAndMount / WaitForUnmount)', () => {
  it('waits for the volumes before the sync task and hands it the volume map and the pod directory', async () => {
    const { syncer, volumes, inputs } = setup();
    volumes.volumes.set('u1', { data: { path: '/v/data', readOnly: false } });
    await syncer.syncPod({ signal: new AbortController().signal }, 'create', pod);
    expect(volumes.calls).toEqual(['mount u1']);
    expect(inputs[0]).toMatchObject({ volumes: { data: { path: '/v/data', readOnly: false } }, podDir: '/root/pods/u1' });
  });

  it('a mount failure is a FailedMount event and a sync error; no sync task runs', async () => {
    const { syncer, volumes, tasks, events } = setup();
    volumes.failures.set(
      'u1',
      new Error('unmounted volumes=[cfg], unattached volumes=[], failed to process volumes=[]: timed out waiting for the condition'),
    );
    await expect(syncer.syncPod({ signal: new AbortController().signal }, 'create', pod)).rejects.toThrow(
      'Unable to attach or mount volumes: unmounted volumes=[cfg]',
    );
    expect(tasks).toEqual([]);
    expect(events).toEqual([
      'Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[cfg], unattached volumes=[], failed to process volumes=[]: timed out waiting for the condition',
    ]);
  });

  it('a wait cancelled by the pod worker (the pod is being killed) is no event', async () => {
    const { syncer, volumes, events, tasks } = setup();
    volumes.hold = true;
    const ac = new AbortController();
    const sync = syncer.syncPod({ signal: ac.signal }, 'create', pod).catch((e: Error) => e);
    await new Promise((r) => setImmediate(r));
    expect(volumes.calls).toEqual(['mount u1']);
    ac.abort(new Error('pod sync cancelled'));
    expect(((await sync) as Error).message).toBe('pod sync cancelled');
    expect(events).toEqual([]);
    expect(tasks).toEqual([]);
  });

  it('a terminated pod’s volumes are torn down, whether it is still desired or gone', async () => {
    const { syncer, volumes, podManager } = setup();
    podManager.addOrUpdate(pod);
    await syncer.syncTerminatedPod({ signal: new AbortController().signal }, pod);
    podManager.remove(pod);
    await syncer.syncTerminatedPod({ signal: new AbortController().signal }, pod);
    expect(volumes.calls).toEqual(['unmount u1', 'unmount u1']);
  });

  // Upstream SyncTerminatedPod calls TerminatePod only after WaitForUnmount: until then the apiserver
  // object of a deleted pod stays (its status is not finished, so the status sync does not delete it).
  it('the status is finished only once the teardown has completed; a failed teardown fails the call', async () => {
    const { syncer, volumes, podManager, statusManager } = setup();
    const deleted: Pod = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    podManager.addOrUpdate(deleted);
    volumes.unmountFailures.push(new Error('mounted volumes=[scratch]: timed out waiting for the condition'));
    const ctx = { signal: new AbortController().signal };
    await expect(syncer.syncTerminatedPod(ctx, deleted)).rejects.toThrow('mounted volumes=[scratch]');
    expect(statusManager.getVersioned('u1')?.podIsFinished).toBeUndefined();
    await syncer.syncTerminatedPod(ctx, deleted);
    expect(statusManager.getVersioned('u1')).toMatchObject({ podIsFinished: true, status: { phase: 'Failed' } });
    expect(volumes.calls).toEqual(['unmount u1', 'unmount u1']);
  });
});

describe('PoolSyncer and the pod cgroup (upstream syncPod: pcm.EnsureExists before SyncPod)', () => {
  it('makes the pod cgroup before the sync task and hands the task its cgroup_parent', async () => {
    const order: string[] = [];
    const { syncer, inputs, tasks } = setup({
      podCgroups: {
        ensureExists: async (p) => void order.push(`ensure ${p.metadata.uid}`),
        cgroupParent: (p) => `/kubepods/besteffort/pod${p.metadata.uid}`,
      },
    });
    await syncer.syncPod({ signal: new AbortController().signal }, 'create', pod);
    order.push(...tasks);
    expect(order).toEqual(['ensure u1', 'syncPod']);
    expect(inputs[0]?.cgroupParent).toBe('/kubepods/besteffort/podu1');
  });

  it('a failure is a FailedCreatePodContainer event and a sync error; no sync task runs', async () => {
    const { syncer, tasks, events } = setup({
      podCgroups: { ensureExists: () => Promise.reject(new Error('EACCES: permission denied')), cgroupParent: () => '/x' },
    });
    await expect(syncer.syncPod({ signal: new AbortController().signal }, 'create', pod)).rejects.toThrow(
      'unable to ensure pod container exists: EACCES: permission denied',
    );
    expect(tasks).toEqual([]);
    expect(events).toEqual(['Warning FailedCreatePodContainer unable to ensure pod container exists: EACCES: permission denied']);
  });

  it('without pod cgroups the task gets no cgroup_parent', async () => {
    const { syncer, inputs } = setup();
    await syncer.syncPod({ signal: new AbortController().signal }, 'create', pod);
    expect(inputs[0]).not.toHaveProperty('cgroupParent');
  });
});
