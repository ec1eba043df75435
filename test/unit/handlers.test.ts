import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import type { ContainerDeletor } from '../../src/main/kubelet/container-deletor.js';
import type { AdmitNode } from '../../src/main/admission/admit.js';
import { PodHandlers } from '../../src/main/kubelet/handlers.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import type { PodWorkers, UpdatePodOptions } from '../../src/main/pod-workers/pod-workers.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import { FakeClock } from '../fakes/fake-clock.js';
import type { PodStatus as RuntimePodStatus } from '../../src/runtime/types.js';

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

/** A cached runtime status with one running container. */
const runningStatus = (uid: string): RuntimePodStatus => ({
  uid,
  name: uid,
  namespace: 'default',
  ips: [],
  timestamp: 0,
  sandboxStatuses: [],
  containerStatuses: [{ id: `${uid}-c`, name: 'c', state: 'running' } as RuntimePodStatus['containerStatuses'][number]],
});

function setup(ready: () => boolean, admitNode: AdmitNode = { allocatable: { cpu: '4', memory: '8Gi', pods: 110 } }) {
  const { workers, updates } = recordingWorkers();
  const podManager = new PodManager();
  const statusManager = new StatusManager();
  const clock = new FakeClock();
  const events: string[] = [];
  const handlers = new PodHandlers({
    podManager,
    podWorkers: workers,
    statusManager,
    admitNode,
    recorder: { record: (ref, type, reason, message) => void events.push(`${ref.kind}/${ref.name ?? ''} ${type} ${reason}: ${message}`) },
    runtimeUids: () => [],
    cachedStatus: () => undefined,
    containerDeletor: { deleteContainersInPod: () => {} } as unknown as ContainerDeletor,
    allSourcesReady: ready,
    clock,
    logger: pino({ level: 'silent' }),
  });
  return { handlers, podManager, statusManager, updates, clock, events };
}

describe('HandlePodAdditions: a pod admission rejects (upstream rejectPod)', () => {
  it('is not started, gets phase Failed with the reason, and a Warning event with the reason and message', () => {
    const { handlers, statusManager, updates, events } = setup(() => true, {
      allocatable: { cpu: '4', memory: '8Gi', pods: 110 },
      maxContainersPerPod: 2,
    });
    const containers = [1, 2, 3].map((i) => ({ name: `c${i}`, image: 'busybox:1' }));
    const many = pod('many', { containers });
    const fits = pod('fits');
    handlers.handlePodAdditions([many, fits]);
    expect(updates.map((u) => u.pod?.metadata.uid)).toEqual(['fits']);
    expect(handlers.isRejected('many')).toBe(true);
    const status = statusManager.getPodStatus('many');
    expect(status?.phase).toBe('Failed');
    expect(status?.reason).toBe('TooManyContainers');
    const message =
      "the pod has 3 containers (init, regular and ephemeral), over this node's limit of 2 (--max-containers-per-pod; 0 = no limit)";
    expect(status?.message).toBe(`Pod was rejected: ${message}`);
    expect(events).toEqual([`Pod/many Warning TooManyContainers: ${message}`]);
  });
});

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

describe('HandlePodCleanups: pod cgroups (upstream cleanupOrphanedPodCgroups)', () => {
  it('keeps the cgroups of pods a worker still runs, of pods with something running, and of desired pods not yet started', () => {
    const states = new Map([
      ['syncing', { state: 'syncing' }],
      ['terminating', { state: 'terminating' }],
      ['terminated', { state: 'terminated' }],
      ['terminated-but-running', { state: 'terminated' }],
    ]);
    const workers = {
      update: () => {},
      isPodTerminationRequested: () => false,
      isPodKnownTerminated: (uid: string) => uid === 'desired-finished',
      shouldPodContentBeRemoved: () => false,
      syncKnownPods: () => states,
    } as unknown as PodWorkers;
    const running = new Set(['orphan-running', 'terminated-but-running']);
    const podManager = new PodManager();
    let keep: ((uid: string) => boolean) | undefined;
    const handlers = new PodHandlers({
      podManager,
      podWorkers: workers,
      statusManager: new StatusManager(),
      admitNode: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 } },
      recorder: { record: () => undefined },
      runtimeUids: () => [],
      cachedStatus: (uid) => (running.has(uid) ? runningStatus(uid) : undefined),
      containerDeletor: { deleteContainersInPod: () => {} } as unknown as ContainerDeletor,
      allSourcesReady: () => true,
      cleanupPodCgroups: (k) => (keep = k),
      clock: new FakeClock(),
      logger: pino({ level: 'silent' }),
    });
    for (const uid of ['desired-new', 'desired-finished']) podManager.addOrUpdate(pod(uid));
    handlers.handlePodCleanups();
    const kept = [
      'syncing',
      'terminating',
      'terminated',
      'terminated-but-running',
      'orphan-running',
      'desired-new',
      'desired-finished',
      'unknown',
    ].filter((uid) => keep?.(uid));
    expect(kept).toEqual(['syncing', 'terminating', 'terminated-but-running', 'orphan-running', 'desired-new']);
  });
});

describe('HandlePodCleanups: orphans known only to the runtime', () => {
  it('kills a running one, but not one whose cached status may predate its own termination here', () => {
    const { workers, updates } = recordingWorkers();
    Object.assign(workers, { syncKnownPods: () => new Map() });
    let stale = new Set(['just-stopped']);
    const handlers = new PodHandlers({
      podManager: new PodManager(),
      podWorkers: workers,
      statusManager: new StatusManager(),
      admitNode: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 } },
      recorder: { record: () => undefined },
      runtimeUids: () => ['orphan', 'just-stopped'],
      cachedStatus: runningStatus,
      cachePredatesTermination: (uid) => stale.has(uid),
      containerDeletor: { deleteContainersInPod: () => {} } as unknown as ContainerDeletor,
      allSourcesReady: () => true,
      clock: new FakeClock(),
      logger: pino({ level: 'silent' }),
    });
    handlers.handlePodCleanups();
    expect(updates.map((u) => [u.runningPod?.uid, u.updateType])).toEqual([['orphan', 'kill']]);
    // A relist after the stop still shows it running: then it is an orphan like any other.
    stale = new Set();
    updates.length = 0;
    handlers.handlePodCleanups();
    expect(updates.map((u) => u.runningPod?.uid)).toEqual(['orphan', 'just-stopped']);
  });
});
