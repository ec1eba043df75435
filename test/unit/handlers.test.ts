import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import type { ContainerDeletor } from '../../src/main/kubelet/container-deletor.js';
import { PodHandlers } from '../../src/main/kubelet/handlers.js';
import { PodManager } from '../../src/main/kubelet/pod-manager.js';
import type { PodWorkers, UpdatePodOptions } from '../../src/main/pod-workers/pod-workers.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import { FakeClock } from '../fakes/fake-clock.js';

/** Pod workers that only record updates (everything else answers "unknown, not terminated"). */
function recordingWorkers(): { workers: PodWorkers; updates: UpdatePodOptions[] } {
  const updates: UpdatePodOptions[] = [];
  const workers = {
    update: (u: UpdatePodOptions) => void updates.push(u),
    isPodTerminationRequested: () => false,
    isPodKnownTerminated: () => false,
    shouldPodContentBeRemoved: () => false,
  } as unknown as PodWorkers;
  return { workers, updates };
}

const pod = (uid: string, spec: Record<string, unknown> = {}): Pod =>
  PodSchema.parse({
    metadata: { uid, name: uid, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox:1' }], ...spec },
  });

function setup(ready: () => boolean) {
  const { workers, updates } = recordingWorkers();
  const podManager = new PodManager();
  const statusManager = new StatusManager();
  const clock = new FakeClock();
  const handlers = new PodHandlers({
    podManager,
    podWorkers: workers,
    statusManager,
    admitNode: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 } },
    runtimeUids: () => [],
    cachedStatus: () => undefined,
    containerDeletor: { deleteContainersInPod: () => {} } as unknown as ContainerDeletor,
    allSourcesReady: ready,
    clock,
    logger: pino({ level: 'silent' }),
  });
  return { handlers, podManager, statusManager, updates, clock };
}

describe('HandlePodRemoves (upstream deletePod)', () => {
  it('before all sources are ready, a removed pod leaves the desired set but is not killed', () => {
    let ready = false;
    const { handlers, podManager, updates } = setup(() => ready);
    const p = pod('a');
    handlers.handlePodAdditions([p]);
    updates.length = 0;
    handlers.handlePodRemoves([p]);
    expect(podManager.get('a')).toBeUndefined();
    expect(updates).toEqual([]);
    ready = true;
    handlers.handlePodAdditions([p]);
    updates.length = 0;
    handlers.handlePodRemoves([p]);
    expect(updates.map((u) => u.updateType)).toEqual(['kill']);
  });
});

describe('the sync tick syncs pods past their active deadline (upstream PodSyncLoopHandlers)', () => {
  it('adds such pods to the due ones', () => {
    const { handlers, statusManager, clock } = setup(() => true);
    const due = pod('due');
    const late = pod('late', { activeDeadlineSeconds: 10 });
    const early = pod('early', { activeDeadlineSeconds: 3600 });
    handlers.handlePodAdditions([due, late, early]);
    const start = new Date(clock.now()).toISOString();
    for (const p of [late, early]) statusManager.setPodStatus(p, { phase: 'Running', startTime: start });
    clock.step(10_000);
    expect(handlers.podsToSync(['due']).sort()).toEqual(['due', 'late']);
  });
});
