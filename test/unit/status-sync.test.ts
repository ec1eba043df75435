import { afterEach, describe, expect, it } from 'vitest';
import type { Histogram } from 'prom-client';
import type { Pod } from '../../src/api/pod.js';
import type { PodStatus } from '../../src/api/pod-status.js';
import { ApiStatusError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import { PodStorage } from '../../src/main/podconfig/pod-storage.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, CONFIG_SOURCE_ANNOTATION } from '../../src/main/podconfig/types.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import { mergePodStatus, STATUS_BATCH_PERIOD_MS, StatusSync } from '../../src/main/status/status-sync.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakePodApi } from '../fakes/fake-pod-api.js';

const settle = async (rounds = 10) => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
};
const T0 = '2026-01-01T00:00:00Z';
type Condition = NonNullable<PodStatus['conditions']>[number];
const cond = (type: string, status: Condition['status'] = 'True', extra: Partial<Condition> = {}): Condition => ({
  type,
  status,
  lastTransitionTime: T0,
  ...extra,
});
const SCHEDULED: PodStatus = { phase: 'Pending', conditions: [cond('PodScheduled')] };
const running = (ready = true, restartCount = 0): PodStatus => ({
  phase: 'Running',
  conditions: [
    cond('Initialized'),
    cond('Ready', ready ? 'True' : 'False'),
    cond('ContainersReady', ready ? 'True' : 'False'),
    cond('PodScheduled'),
  ],
  hostIP: '10.0.0.5',
  podIP: '10.1.0.7',
  podIPs: [{ ip: '10.1.0.7' }],
  startTime: T0,
  qosClass: 'BestEffort',
  containerStatuses: [{ name: 'c', ready, restartCount, image: 'nginx:1', imageID: 'sha256:1', started: true }],
});

const apiPod = (name: string, uid: string, status: PodStatus = SCHEDULED, extra: Partial<Pod['metadata']> = {}): Pod =>
  ({
    metadata: { name, namespace: 'default', uid, annotations: { [CONFIG_SOURCE_ANNOTATION]: 'api' }, ...extra },
    spec: {},
    status,
  }) as Pod;
const staticPod = (extra: Partial<Pod['metadata']> = {}): Pod =>
  ({
    metadata: {
      name: 'web-node1',
      namespace: 'kube-system',
      uid: 'static-uid',
      annotations: { [CONFIG_SOURCE_ANNOTATION]: 'file', [CONFIG_HASH_ANNOTATION]: 'h1' },
      ...extra,
    },
    spec: {},
  }) as Pod;
const mirrorPod = (uid: string): Pod => ({
  metadata: {
    name: 'web-node1',
    namespace: 'kube-system',
    uid,
    annotations: { [CONFIG_SOURCE_ANNOTATION]: 'api', [CONFIG_MIRROR_ANNOTATION]: 'h1' },
  },
  spec: { containers: [] },
  status: {},
});

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

function setup(o: { concurrency?: number } = {}) {
  const clock = new FakeClock();
  const api = new FakePodApi();
  const sm = new StatusManager(() => clock.now());
  const pm = new PodManager();
  const observed: number[] = [];
  const sync = new StatusSync({
    client: api.client,
    statusManager: sm,
    podManager: pm,
    clock,
    logger: silentLogger(),
    syncDuration: { observe: (s: number) => observed.push(s) } as unknown as Histogram,
    concurrency: o.concurrency,
  });
  const ac = new AbortController();
  controllers.push(ac);
  sync.start(ac.signal);
  /** A pod both in the apiserver and delivered by the watch. */
  const known = (pod: Pod) => {
    pm.addOrUpdate(api.put(pod));
    return pod;
  };
  /** The watch delivers the apiserver's current copy. */
  const watch = (namespace: string, name: string) => pm.addOrUpdate(structuredClone(api.pod(namespace, name)!));
  const batch = async () => {
    clock.step(STATUS_BATCH_PERIOD_MS);
    await settle();
  };
  return { clock, api, sm, pm, sync, observed, known, watch, batch };
}

describe('mergePodStatus', () => {
  it.each([
    {
      name: 'kubelet-owned conditions come from ours, others from the apiserver, apiserver ones first',
      api: { conditions: [cond('PodScheduled', 'False'), cond('DisruptionTarget'), cond('example.com/gate')] },
      ours: { phase: 'Running', conditions: [cond('PodScheduled'), cond('Ready'), cond('example.com/gate', 'False')] },
      types: ['DisruptionTarget/True', 'example.com/gate/True', 'PodScheduled/True', 'Ready/True'],
    },
    { name: 'no apiserver status', api: undefined, ours: { conditions: [cond('Ready')] }, types: ['Ready/True'] },
    { name: 'nothing on either side', api: {}, ours: {}, types: [] },
  ] as { name: string; api: PodStatus | undefined; ours: PodStatus; types: string[] }[])('$name', ({ api, ours, types }) => {
    const merged = mergePodStatus(api, ours);
    expect(merged.conditions!.map((c) => `${c.type}/${c.status}`)).toEqual(types);
    expect({ ...merged, conditions: undefined }).toEqual({ ...ours, conditions: undefined });
  });
});

describe('StatusSync writes', () => {
  it('GETs the pod, then patches pods/<name>/status with the UID as precondition, from the apiserver’s status to ours', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    t.sm.setPodStatus(pod, running());
    await settle();
    expect(t.api.calls.map((c) => `${c.verb} ${c.path} ${c.patchType ?? ''}`)).toEqual([
      'get /api/v1/namespaces/default/pods/web ',
      'patch /api/v1/namespaces/default/pods/web/status strategic',
    ]);
    const body = t.api.patches()[0].body as { metadata: unknown; status: Record<string, unknown> };
    expect(body.metadata).toEqual({ uid: 'u1' });
    expect(body.status.phase).toBe('Running');
    // PodScheduled did not change, so it is not in the patch.
    expect(body.status.conditions).not.toContainEqual(expect.objectContaining({ type: 'PodScheduled' }));
    expect(t.api.pod('default', 'web')!.status).toEqual(running());
  });

  it('each write is a patch from the status the apiserver has now, not the stale watch copy', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    t.sm.setPodStatus(pod, running());
    await settle();
    t.sm.setPodStatus(pod, running(true, 1));
    await settle();
    expect(t.api.patches()).toHaveLength(2);
    expect(Object.keys((t.api.patches()[1].body as { status: object }).status)).toEqual(['containerStatuses']);
    expect(t.api.pod('default', 'web')!.status).toEqual(running(true, 1));
  });

  it('keeps conditions the kubelet does not own', async () => {
    const t = setup();
    const theirs = [cond('PodScheduled'), cond('DisruptionTarget'), cond('example.com/gate')];
    const pod = t.known(apiPod('web', 'u1', { phase: 'Pending', conditions: theirs }));
    t.sm.setPodStatus(pod, { ...running(), conditions: [...running().conditions!, cond('example.com/gate', 'False')] });
    await settle();
    const conditions = t.api.pod('default', 'web')!.status!.conditions!;
    expect(conditions).toContainEqual(cond('DisruptionTarget'));
    expect(conditions).toContainEqual(cond('example.com/gate'));
    expect(conditions.map((c) => c.type).sort()).toEqual(
      ['ContainersReady', 'DisruptionTarget', 'Initialized', 'PodScheduled', 'Ready', 'example.com/gate'].sort(),
    );
  });

  it('patches nothing when the apiserver already has our status, and the batch does not retry it', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1', running()));
    t.sm.setPodStatus(pod, running());
    await settle();
    await t.batch();
    expect(t.api.calls.map((c) => c.verb)).toEqual(['get']);
    expect(t.observed).toHaveLength(1);
  });

  it('a static pod writes to its mirror pod (path by name, precondition the mirror’s UID)', async () => {
    const t = setup();
    const s = staticPod();
    t.pm.addOrUpdate(s);
    t.known(mirrorPod('m1'));
    t.sm.setPodStatus(s, running());
    await settle();
    expect(t.api.patches().map((c) => [c.path, (c.body as { metadata: unknown }).metadata])).toEqual([
      ['/api/v1/namespaces/kube-system/pods/web-node1/status', { uid: 'm1' }],
    ]);
  });

  it('a static pod without a mirror pod is skipped, and written once the mirror exists', async () => {
    const t = setup();
    const s = staticPod();
    t.pm.addOrUpdate(s);
    t.sm.setPodStatus(s, running());
    await settle();
    await t.batch();
    expect(t.api.calls).toEqual([]);
    t.known(mirrorPod('m1'));
    await t.batch();
    expect(t.api.patches()).toHaveLength(1);
    expect(t.api.pod('kube-system', 'web-node1')!.status).toEqual(running());
  });

  it.each([
    {
      name: 'another UID under the name (deleted and recreated): dropped',
      arrange: (t: ReturnType<typeof setup>) => t.api.put(apiPod('web', 'u2')),
      now: ['get'],
      later: ['get'],
    },
    {
      name: '409 UID precondition on the patch (recreated since the GET): dropped',
      arrange: (t: ReturnType<typeof setup>) =>
        t.api.fail.patch.push(new ApiStatusError('Precondition failed: UID in precondition: u1, UID in object meta: u2', 409, 'Conflict')),
      now: ['get', 'patch'],
      later: ['get', 'patch'],
    },
    {
      name: 'other 409: retried by the next batch',
      arrange: (t: ReturnType<typeof setup>) => t.api.fail.patch.push(new ApiStatusError('modified', 409, 'Conflict')),
      now: ['get', 'patch'],
      later: ['get', 'patch', 'get', 'patch'],
    },
    {
      name: '500 on the patch: retried by the next batch',
      arrange: (t: ReturnType<typeof setup>) => t.api.fail.patch.push(new ApiStatusError('etcd', 500, 'InternalError')),
      now: ['get', 'patch'],
      later: ['get', 'patch', 'get', 'patch'],
    },
    {
      name: '500 on the GET: retried by the next batch',
      arrange: (t: ReturnType<typeof setup>) => t.api.fail.get.push(new ApiStatusError('etcd', 500, 'InternalError')),
      now: ['get'],
      later: ['get', 'get', 'patch'],
    },
  ])('$name', async ({ arrange, now, later }) => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    arrange(t);
    const verbs = () => t.api.calls.map((c) => c.verb);
    t.sm.setPodStatus(pod, running());
    await settle();
    expect(verbs()).toEqual(now);
    await t.batch();
    await t.batch();
    expect(verbs()).toEqual(later);
  });

  // Upstream syncPod returns on a 404 without recording the version, so needsUpdate
  // tries again each batch until the watch's DELETE takes the pod out of the pod manager.
  it('404: not written; one attempt per batch until the pod leaves the pod manager', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    t.api.pods.clear();
    t.sm.setPodStatus(pod, running());
    await settle();
    const gets = () => t.api.calls.filter((c) => c.verb === 'get').length;
    expect(gets()).toBe(1);
    await t.batch();
    await t.batch();
    expect(gets()).toBe(3);
    expect(t.api.patches()).toEqual([]);
    expect(t.sm.getVersioned('u1')!.pendingSince).toBeDefined(); // never acknowledged as written
    t.pm.remove(pod);
    await t.batch();
    expect(gets()).toBe(3);
  });

  it('a pod that comes back after a 404 gets the unwritten status at the next batch', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    const stored = t.api.pod('default', 'web')!;
    t.api.pods.clear();
    t.sm.setPodStatus(pod, running());
    await settle();
    t.api.pods.set('default/web', stored);
    await t.batch();
    expect(t.api.pod('default', 'web')!.status).toEqual(running());
  });

  it('coalesces: two changes of a queued pod make one write of the newest', async () => {
    const t = setup({ concurrency: 1 });
    const a = t.known(apiPod('a', 'ua'));
    const b = t.known(apiPod('b', 'ub'));
    t.api.hold = true;
    t.sm.setPodStatus(a, running(false));
    t.sm.setPodStatus(b, running(false));
    t.sm.setPodStatus(b, running(true));
    t.sm.setPodStatus(a, running(true)); // a is in flight: written again after
    await settle();
    while (t.api.release() > 0) await settle();
    expect(t.api.patches().map((c) => c.path.split('/')[6])).toEqual(['a', 'b', 'a']);
    expect(t.api.pod('default', 'b')!.status).toEqual(running(true));
    expect(t.api.pod('default', 'a')!.status).toEqual(running(true));
    expect(t.sync.pending).toBe(0);
  });

  it.each([
    { name: '2 (concurrency 2)', concurrency: 2, pods: 5 },
    { name: '4 (the default)', concurrency: undefined, pods: 7, expected: 4 },
  ])('runs at most $name writes at a time', async ({ concurrency, pods, expected }) => {
    const t = setup({ concurrency });
    t.api.hold = true;
    for (let i = 0; i < pods; i++) t.sm.setPodStatus(t.known(apiPod(`p${i}`, `u${i}`)), running());
    await settle();
    expect(t.api.held).toBe(expected ?? concurrency);
    while (t.api.release() > 0) await settle();
    expect(t.api.maxInFlight).toBe(expected ?? concurrency);
    expect(t.api.patches()).toHaveLength(pods);
  });
});

describe('StatusSync batch (every 10 s)', () => {
  it('writes to a recreated mirror pod though our status did not change', async () => {
    const t = setup();
    const s = staticPod();
    t.pm.addOrUpdate(s);
    t.known(mirrorPod('m1'));
    t.sm.setPodStatus(s, running());
    await settle();
    t.api.pods.clear();
    t.pm.remove(mirrorPod('m1'));
    t.known(mirrorPod('m2'));
    await t.batch();
    expect(t.api.patches().map((c) => (c.body as { metadata: { uid: string } }).metadata.uid)).toEqual(['m1', 'm2']);
    expect(t.api.pod('kube-system', 'web-node1')!.status).toEqual(running());
  });

  it('writes our status back when someone else changed a kubelet-owned part of it', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    t.sm.setPodStatus(pod, running());
    await settle();
    const stored = t.api.pod('default', 'web')!;
    stored.status!.conditions = stored.status!.conditions!.map((c) => (c.type === 'Ready' ? cond('Ready', 'False') : c));
    stored.metadata.resourceVersion = String(Number(stored.metadata.resourceVersion) + 100); // the apiserver bumps it on every change
    t.watch('default', 'web');
    await t.batch();
    // Upstream needsReconcile → syncPod GETs the pod and patches from its status to ours.
    expect(t.api.pod('default', 'web')!.status).toEqual(running());
  });

  // Regression (fault suite, apiserver outage): the node controller marks the pods of an unreachable node
  // Ready=False; the change reaches the pod manager through the pod config as a RECONCILE, and the kubelet
  // must write Ready back (upstream needsReconcile). The pod config used to keep the first resourceVersion.
  it('writes Ready back after someone else’s change delivered through the pod config (RECONCILE)', async () => {
    const t = setup();
    const storage = new PodStorage({ clock: t.clock, logger: silentLogger() });
    const deliver = () => {
      for (const u of storage.merge('api', { op: 'SET', pods: [structuredClone(t.api.pod('default', 'web')!)] }))
        for (const p of u.pods) t.pm.addOrUpdate(p);
    };
    t.api.put(apiPod('web', 'u1'));
    deliver();
    t.sm.setPodStatus(t.pm.get('u1')!, running());
    await settle();
    expect(t.api.pod('default', 'web')!.status).toEqual(running());
    deliver(); // the watch's copy of our own write: nothing to do
    await t.batch();
    expect(t.api.patches()).toHaveLength(1);
    const stored = t.api.pod('default', 'web')!;
    stored.status!.conditions = stored.status!.conditions!.map((c) => (c.type === 'Ready' ? cond('Ready', 'False') : c));
    stored.metadata.resourceVersion = String(Number(stored.metadata.resourceVersion) + 100);
    deliver();
    expect(t.pm.get('u1')!.status!.conditions!.find((c) => c.type === 'Ready')!.status).toBe('False');
    await t.batch();
    expect(t.api.patches()).toHaveLength(2);
    expect(t.api.pod('default', 'web')!.status).toEqual(running());
  });

  it('leaves alone a condition the kubelet does not own that someone else added', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    t.sm.setPodStatus(pod, running());
    await settle();
    const stored = t.api.pod('default', 'web')!;
    stored.status!.conditions!.push(cond('DisruptionTarget'));
    t.watch('default', 'web');
    await t.batch();
    expect(t.api.patches()).toHaveLength(1);
  });

  it('a watch copy older than our write causes no write', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    t.sm.setPodStatus(pod, running());
    await settle();
    await t.batch();
    expect(t.api.patches()).toHaveLength(1);
  });
});

describe('StatusSync deletion (canBeDeleted)', () => {
  const DELETING = { deletionTimestamp: T0, deletionGracePeriodSeconds: 30 };
  const SUCCEEDED: PodStatus = { ...running(false), phase: 'Succeeded' };

  it('a terminal status is written but the pod is not deleted before its termination has finished', async () => {
    const t = setup();
    t.sm.setPodStatus(t.known(apiPod('web', 'u1', SCHEDULED, DELETING)), SUCCEEDED);
    await settle();
    await t.batch();
    expect(t.api.calls.map((c) => c.verb)).toEqual(['get', 'patch']);
    expect(t.api.pod('default', 'web')!.status!.phase).toBe('Succeeded');
  });

  it('deletes once, with grace 0 and the UID, when terminatePod marks the status finished', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1', SCHEDULED, DELETING));
    t.sm.setPodStatus(pod, SUCCEEDED);
    await settle();
    t.sm.terminatePod(pod);
    await settle();
    expect(t.api.calls.slice(2).map((c) => c.verb)).toEqual(['get', 'patch', 'delete']);
    expect(t.api.calls.at(-1)).toEqual({
      verb: 'delete',
      path: '/api/v1/namespaces/default/pods/web',
      body: { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } },
    });
    t.api.put(apiPod('web', 'u1', SUCCEEDED, DELETING)); // still there (e.g. a finalizer)
    await t.batch();
    await t.batch();
    expect(t.api.calls.filter((c) => c.verb === 'delete')).toHaveLength(1);
  });

  it('a pod deleted after it finished (a completed Job pod) is deleted at the next batch', async () => {
    const t = setup();
    const pod = t.known(apiPod('web', 'u1'));
    t.sm.setPodStatus(pod, SUCCEEDED);
    t.sm.terminatePod(pod);
    await settle();
    expect(t.api.calls.filter((c) => c.verb === 'delete')).toEqual([]);
    t.api.pod('default', 'web')!.metadata.deletionTimestamp = T0;
    t.watch('default', 'web');
    await t.batch();
    expect(t.api.calls.filter((c) => c.verb === 'delete')).toHaveLength(1);
  });

  it.each([
    { name: 'no deletionTimestamp', pod: () => apiPod('web', 'u1') },
    { name: 'a static pod', pod: () => staticPod(DELETING) },
  ])('never deletes $name', async ({ pod }) => {
    const t = setup();
    const p = pod();
    t.pm.addOrUpdate(p);
    t.known(mirrorPod('m1'));
    if (p.metadata.uid === 'u1') t.api.put(p);
    t.sm.setPodStatus(p, running());
    t.sm.terminatePod(p);
    await settle();
    await t.batch();
    expect(t.api.calls.filter((c) => c.verb === 'delete')).toEqual([]);
    expect(t.api.patches()).toHaveLength(2); // the status, then the final one
  });

  it.each([
    { name: 'a 500 is retried by the batch', err: new ApiStatusError('etcd', 500, 'InternalError'), deletes: 2 },
    { name: 'a 404 is not retried', err: new ApiStatusError('gone', 404, 'NotFound'), deletes: 1 },
  ])('delete failures: $name', async ({ err, deletes }) => {
    const t = setup();
    t.api.fail.delete.push(err);
    const pod = t.known(apiPod('web', 'u1', SCHEDULED, DELETING));
    t.sm.setPodStatus(pod, SUCCEEDED);
    t.sm.terminatePod(pod);
    await settle();
    await t.batch();
    await t.batch();
    expect(t.api.calls.filter((c) => c.verb === 'delete')).toHaveLength(deletes);
  });
});

describe('StatusSync syncDuration (kubelet_pod_status_sync_duration_seconds)', () => {
  it('observes the time from the first unwritten change to the write', async () => {
    const t = setup({ concurrency: 1 });
    const a = t.known(apiPod('a', 'ua'));
    const b = t.known(apiPod('b', 'ub'));
    t.api.hold = true;
    t.sm.setPodStatus(a, running()); // holds the only slot
    t.sm.setPodStatus(b, running(false));
    t.clock.step(1000);
    t.sm.setPodStatus(b, running(true));
    t.clock.step(1500);
    await settle();
    while (t.api.release() > 0) await settle();
    expect(t.observed).toEqual([2.5, 2.5]);
    t.api.hold = false;
    t.clock.step(500);
    t.sm.setPodStatus(b, running(true, 3));
    await settle();
    expect(t.observed).toEqual([2.5, 2.5, 0]);
  });
});
