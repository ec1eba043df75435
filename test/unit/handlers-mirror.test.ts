import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { silentLogger } from '../../src/common/logger.js';
import { PodHandlers, type HandlerDeps } from '../../src/main/kubelet/handlers.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import type { PodWorkers, PodWorkerSync, UpdatePodOptions } from '../../src/main/pod-workers/pod-workers.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, CONFIG_SOURCE_ANNOTATION } from '../../src/main/podconfig/types.js';
import type { StatusManager } from '../../src/main/status/status-manager.js';
import { FakeClock } from '../fakes/fake-clock.js';

const settle = () => new Promise<void>((r) => setImmediate(r));

const staticPod = (name = 'web-node1', uid = 'static-uid'): Pod => ({
  metadata: {
    name,
    namespace: 'kube-system',
    uid,
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: { [CONFIG_SOURCE_ANNOTATION]: 'file', [CONFIG_HASH_ANNOTATION]: 'h1' },
  },
  spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
});
const mirrorPod = (name = 'web-node1', uid = 'mirror-uid'): Pod => ({
  metadata: {
    name,
    namespace: 'kube-system',
    uid,
    creationTimestamp: '2026-01-01T00:00:01Z',
    annotations: { [CONFIG_SOURCE_ANNOTATION]: 'api', [CONFIG_HASH_ANNOTATION]: 'h1', [CONFIG_MIRROR_ANNOTATION]: 'h1' },
  },
  spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
});

type Workers = Pick<
  PodWorkers,
  | 'update'
  | 'isPodTerminationRequested'
  | 'isPodKnownTerminated'
  | 'syncKnownPods'
  | 'isPodForMirrorPodTerminatingByFullName'
  | 'shouldPodContentBeRemoved'
>;
/** The no-op bases the partial fakes override. */
const noopWorkers: Workers = {
  update: () => undefined,
  isPodTerminationRequested: () => false,
  isPodKnownTerminated: () => false,
  syncKnownPods: () => new Map<string, PodWorkerSync>(),
  isPodForMirrorPodTerminatingByFullName: () => false,
  shouldPodContentBeRemoved: () => false,
};
type Statuses = Pick<StatusManager, 'setPodStatus' | 'removePodStatus' | 'removeOrphanedStatuses'>;
const noopStatuses: Statuses = { setPodStatus: () => undefined, removePodStatus: () => undefined, removeOrphanedStatuses: () => undefined };

function setup(
  o: {
    maxPods?: number;
    workers?: Partial<Workers>;
    mirrorDelete?: (ns: string, name: string, uid?: string) => Promise<boolean>;
    noMirrorClient?: boolean;
  } = {},
) {
  const updates: UpdatePodOptions[] = [];
  const statuses: string[] = [];
  const deletes: string[] = [];
  const desiredSeen: string[][] = [];
  const podManager = new PodManager();
  const workers: Workers = {
    ...noopWorkers,
    update: (u) => void updates.push(u),
    syncKnownPods: (desired) => {
      desiredSeen.push(desired.map((p) => p.metadata.uid ?? ''));
      return new Map();
    },
    ...o.workers,
  };
  const statusManager: Statuses = { ...noopStatuses, setPodStatus: (pod) => void statuses.push(pod.metadata.uid ?? '') };
  const deps: HandlerDeps = {
    podManager,
    podWorkers: workers as PodWorkers,
    statusManager: statusManager as StatusManager,
    admitNode: { allocatable: { cpu: '4', memory: '8Gi', pods: o.maxPods ?? 110 } },
    recorder: { record: () => undefined },
    runtimeUids: () => [],
    cachedStatus: () => undefined,
    containerDeletor: { deleteContainersInPod: () => undefined } as unknown as HandlerDeps['containerDeletor'],
    allSourcesReady: () => true,
    mirrorClient: o.noMirrorClient
      ? undefined
      : {
          delete: (ns, name, uid) => {
            deletes.push(`${ns}/${name}/${uid}`);
            return o.mirrorDelete ? o.mirrorDelete(ns, name, uid) : Promise.resolve(true);
          },
        },
    clock: new FakeClock(),
    logger: silentLogger(),
  };
  const handlers = new PodHandlers(deps);
  const seen = () => updates.map((u) => `${u.updateType} ${u.pod?.metadata.uid ?? u.runningPod?.uid}`);
  return { handlers, podManager, updates, statuses, deletes, desiredSeen, seen };
}

type Op = 'add' | 'update' | 'remove';
const deliver = (h: PodHandlers, op: Op, pods: Pod[]) =>
  op === 'add' ? h.handlePodAdditions(pods) : op === 'update' ? h.handlePodUpdates(pods) : h.handlePodRemoves(pods);

// Upstream handleMirrorPod: a mirror pod's ADD, UPDATE and REMOVE are an UPDATE of
// its static pod (which re-creates the mirror if needed); the mirror itself is
// never admitted, never gets a worker, never gets a status.
describe('PodHandlers: mirror pods', () => {
  it.each<{ op: Op; mirrorAfter: boolean }>([
    { op: 'add', mirrorAfter: true },
    { op: 'update', mirrorAfter: true },
    { op: 'remove', mirrorAfter: false },
  ])('a mirror pod $op syncs its static pod with an update', ({ op, mirrorAfter }) => {
    const t = setup();
    const s = staticPod();
    t.handlers.handlePodAdditions([s]);
    if (op !== 'add') t.handlers.handlePodAdditions([mirrorPod()]);
    t.updates.length = 0;
    deliver(t.handlers, op, [mirrorPod()]);
    expect(t.seen()).toEqual(['update static-uid']);
    expect(t.updates[0].pod).toBe(s);
    expect(t.podManager.mirrorPodOf(s) !== undefined).toBe(mirrorAfter);
    expect(t.podManager.get('mirror-uid')).toBeUndefined();
  });

  it.each<Op>(['add', 'update', 'remove'])('a mirror pod %s without its static pod does nothing', (op) => {
    const t = setup();
    t.handlers.handlePodAdditions([staticPod('other', 'other-uid')]);
    t.updates.length = 0;
    deliver(t.handlers, op, [mirrorPod()]);
    expect(t.updates).toEqual([]);
    expect(t.statuses).toEqual([]);
  });

  it('a mirror pod is never admitted (a full node rejects nothing for it)', () => {
    const t = setup({ maxPods: 1 });
    t.handlers.handlePodAdditions([staticPod()]);
    t.handlers.handlePodAdditions([mirrorPod()]);
    expect(t.statuses).toEqual([]);
    expect(t.seen()).toEqual(['create static-uid', 'update static-uid']);
  });

  it('a mirror pod of a rejected static pod does not start it', () => {
    const t = setup({ maxPods: 0 });
    t.handlers.handlePodAdditions([staticPod()]);
    expect(t.statuses).toEqual(['static-uid']);
    t.handlers.handlePodAdditions([mirrorPod()]);
    t.handlers.handlePodUpdates([mirrorPod()]);
    expect(t.updates).toEqual([]);
  });

  it('a mirror and its static pod in one ADD batch: the static pod is created, never the mirror', () => {
    const t = setup();
    t.handlers.handlePodAdditions([mirrorPod(), staticPod()]);
    expect(t.seen().filter((s) => s.startsWith('create'))).toEqual(['create static-uid']);
    expect(t.updates.every((u) => u.pod?.metadata.uid === 'static-uid')).toBe(true);
  });
});

describe('PodHandlers.handlePodCleanups: orphaned mirror pods', () => {
  it('deletes a mirror pod whose static pod is gone, with its UID', async () => {
    const t = setup();
    t.handlers.handlePodAdditions([staticPod(), mirrorPod()]);
    t.handlers.handlePodRemoves([staticPod()]);
    t.handlers.handlePodCleanups();
    await settle();
    expect(t.deletes).toEqual(['kube-system/web-node1/mirror-uid']);
  });

  it('keeps a mirror pod whose static pod exists', async () => {
    const t = setup();
    t.handlers.handlePodAdditions([staticPod(), mirrorPod()]);
    t.handlers.handlePodCleanups();
    await settle();
    expect(t.deletes).toEqual([]);
  });

  it('keeps an orphaned mirror pod while its static pod is still terminating (by full name)', async () => {
    const asked: string[] = [];
    const t = setup({ workers: { isPodForMirrorPodTerminatingByFullName: (n) => (asked.push(n), n === 'web-node1_kube-system') } });
    t.handlers.handlePodAdditions([mirrorPod(), mirrorPod('db-node1', 'mirror-2')]);
    t.handlers.handlePodCleanups();
    await settle();
    expect(asked.sort()).toEqual(['db-node1_kube-system', 'web-node1_kube-system']);
    expect(t.deletes).toEqual(['kube-system/db-node1/mirror-2']);
  });

  it('mirror pods are not desired pods: the workers never see them and they are never started', () => {
    const t = setup();
    t.handlers.handlePodAdditions([staticPod(), mirrorPod()]);
    t.updates.length = 0;
    t.handlers.handlePodCleanups();
    expect(t.desiredSeen).toEqual([['static-uid']]);
    // The fake knows no workers, so cleanup restarts desired pods: the static one only.
    expect(t.seen()).toEqual(['create static-uid']);
  });

  it('a failed delete is logged and retried by the next cleanup, never thrown', async () => {
    let fail = true;
    const t = setup({ mirrorDelete: () => (fail ? Promise.reject(new Error('apiserver down')) : Promise.resolve(true)) });
    t.handlers.handlePodAdditions([mirrorPod()]);
    expect(() => t.handlers.handlePodCleanups()).not.toThrow();
    await settle();
    fail = false;
    t.handlers.handlePodCleanups();
    await settle();
    expect(t.deletes).toEqual(['kube-system/web-node1/mirror-uid', 'kube-system/web-node1/mirror-uid']);
  });

  it('without a mirror client (standalone) it deletes nothing', () => {
    const t = setup({ noMirrorClient: true });
    t.handlers.handlePodAdditions([mirrorPod()]);
    expect(() => t.handlers.handlePodCleanups()).not.toThrow();
    expect(t.deletes).toEqual([]);
  });
});
