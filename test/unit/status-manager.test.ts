import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import type { PodStatus } from '../../src/api/pod-status.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import { CONFIG_SOURCE_ANNOTATION } from '../../src/main/podconfig/types.js';
import { captureLogger } from '../helpers/capture-logger.js';

const pod = (uid: string) => ({ metadata: { name: uid, namespace: 'default', uid }, spec: {} }) as Pod;
const st = (phase: PodStatus['phase'], restartCount = 0): PodStatus => ({
  phase,
  containerStatuses: [{ name: 'c', ready: false, restartCount, image: 'i', imageID: '' }],
});

describe('StatusManager', () => {
  it.each<{ name: string; sets: PodStatus[]; version: number; calls: number }>([
    { name: 'one status', sets: [st('Pending')], version: 1, calls: 1 },
    { name: 'the same status twice', sets: [st('Pending'), st('Pending')], version: 1, calls: 1 },
    { name: 'an equal copy', sets: [st('Running', 2), structuredClone(st('Running', 2))], version: 1, calls: 1 },
    { name: 'a change deep inside', sets: [st('Running', 0), st('Running', 1)], version: 2, calls: 2 },
    { name: 'changed then changed back', sets: [st('Pending'), st('Running'), st('Pending')], version: 3, calls: 3 },
  ])('versions grow only on real changes: $name', ({ sets, version, calls }) => {
    const sm = new StatusManager();
    const told: string[] = [];
    sm.onChange((uid) => told.push(uid));
    for (const s of sets) sm.setPodStatus(pod('u1'), s);
    expect(sm.getVersioned('u1')?.version).toBe(version);
    expect(told).toEqual(Array(calls).fill('u1'));
    expect(sm.getPodStatus('u1')).toEqual(sets.at(-1));
  });

  it('keeps versions per pod', () => {
    const sm = new StatusManager();
    sm.setPodStatus(pod('a'), st('Pending'));
    sm.setPodStatus(pod('a'), st('Running'));
    sm.setPodStatus(pod('b'), st('Pending'));
    expect([sm.getVersioned('a')?.version, sm.getVersioned('b')?.version]).toEqual([2, 1]);
    expect(sm.uids().sort()).toEqual(['a', 'b']);
  });

  it('pendingSince is the first unacknowledged change; only acknowledging the newest version clears it', () => {
    let now = 1000;
    const sm = new StatusManager(() => now);
    sm.setPodStatus(pod('u1'), st('Pending'));
    now = 2000;
    sm.setPodStatus(pod('u1'), st('Running'));
    expect(sm.getVersioned('u1')).toMatchObject({ version: 2, pendingSince: 1000 });
    sm.acknowledge('u1', 1);
    expect(sm.getVersioned('u1')?.pendingSince).toBe(1000);
    sm.acknowledge('u1', 2);
    expect(sm.getVersioned('u1')?.pendingSince).toBeUndefined();
    now = 5000;
    sm.setPodStatus(pod('u1'), st('Succeeded'));
    expect(sm.getVersioned('u1')).toMatchObject({ version: 3, pendingSince: 5000 });
  });

  it('removes statuses one by one or by a keep predicate', () => {
    const sm = new StatusManager();
    for (const uid of ['a', 'b', 'c']) sm.setPodStatus(pod(uid), st('Pending'));
    sm.removePodStatus('a');
    sm.removeOrphanedStatuses((uid) => uid === 'c');
    expect(sm.uids()).toEqual(['c']);
    expect(sm.getPodStatus('b')).toBeUndefined();
  });
});

describe('StatusManager: container state transitions (upstream updateStatusInternal)', () => {
  const never = (uid: string, status?: PodStatus): Pod => ({
    metadata: { name: uid, namespace: 'default', uid },
    spec: { restartPolicy: 'Never', containers: [] },
    status,
  });
  const withState = (phase: PodStatus['phase'], state: object): PodStatus => ({
    phase,
    containerStatuses: [{ name: 'c', ready: false, restartCount: 0, image: 'i', imageID: '', state }],
  });
  const done = withState('Succeeded', { terminated: { exitCode: 0 } });
  const runningAgain = withState('Running', { running: {} });

  it('drops a status that brings a terminated container back under restartPolicy Never, and logs it', () => {
    const { logger, records } = captureLogger();
    const sm = new StatusManager(() => 0, { logger });
    const told: string[] = [];
    sm.onChange((uid) => told.push(uid));
    sm.setPodStatus(never('u1'), done);
    sm.setPodStatus(never('u1'), runningAgain);
    expect(sm.getVersioned('u1')).toMatchObject({ version: 1, status: done });
    expect(told).toEqual(['u1']);
    expect(records).toContainEqual(
      expect.objectContaining({
        msg: 'Status update on pod aborted',
        err: 'terminated container c attempted illegal transition to non-terminated state',
      }),
    );
  });

  it('checks the first status against the pod’s own from its source, or the mirror pod’s for a static pod', () => {
    const sm = new StatusManager(() => 0, {
      podManager: { mirrorPodOf: (p: Pod) => (p.metadata.uid === 'static' ? never('mirror', done) : undefined) },
    });
    sm.setPodStatus(never('api', done), runningAgain);
    sm.setPodStatus(never('static'), runningAgain);
    sm.setPodStatus(never('fresh'), runningAgain);
    expect(sm.uids()).toEqual(['fresh']);
  });
});

describe('StatusManager.terminatePod (upstream TerminatePod)', () => {
  const apiPod = (extra: Partial<Pod['spec']> = {}, status?: PodStatus): Pod => ({
    metadata: { name: 'p', namespace: 'default', uid: 'u1', annotations: { [CONFIG_SOURCE_ANNOTATION]: 'api' } },
    spec: { containers: [], ...extra },
    status,
  });
  const cs = (name: string, state: object, lastState?: object) => ({
    name,
    ready: false,
    restartCount: 0,
    image: 'i',
    imageID: '',
    state,
    lastState,
  });
  const UNKNOWN = {
    terminated: {
      reason: 'ContainerStatusUnknown',
      message: 'The container could not be located when the pod was terminated',
      exitCode: 137,
    },
  };

  it('marks the status finished, makes waiting containers failed and the phase terminal, with a new version', () => {
    const sm = new StatusManager();
    const pod = apiPod();
    sm.setPodStatus(pod, {
      phase: 'Pending',
      containerStatuses: [cs('a', { waiting: { reason: 'CreateContainerConfigError' } }), cs('b', { terminated: { exitCode: 0 } })],
    });
    sm.terminatePod(pod);
    expect(sm.getVersioned('u1')).toMatchObject({
      version: 2,
      podIsFinished: true,
      status: { phase: 'Failed', containerStatuses: [cs('a', UNKNOWN), cs('b', { terminated: { exitCode: 0 } })] },
    });
    sm.setPodStatus(pod, { ...sm.getPodStatus('u1')!, message: 'later' });
    expect(sm.getVersioned('u1')).toMatchObject({ version: 3, podIsFinished: true });
  });

  it('keeps a terminal phase, and a static pod’s phase', () => {
    const sm = new StatusManager();
    sm.setPodStatus(apiPod(), { phase: 'Succeeded' });
    sm.terminatePod(apiPod());
    expect(sm.getPodStatus('u1')!.phase).toBe('Succeeded');
    const staticPod = { ...apiPod(), metadata: { ...apiPod().metadata, uid: 's1', annotations: { [CONFIG_SOURCE_ANNOTATION]: 'file' } } };
    sm.setPodStatus(staticPod, { phase: 'Running' });
    sm.terminatePod(staticPod);
    expect(sm.getVersioned('s1')).toMatchObject({ podIsFinished: true, status: { phase: 'Running' } });
  });

  it('before the pod initialized, only the init containers that started count as failed', () => {
    const sm = new StatusManager();
    const pod = apiPod(
      {
        initContainers: [
          { name: 'i1', image: 'i' },
          { name: 'i2', image: 'i' },
          { name: 'i3', image: 'i' },
        ],
      },
      { phase: 'Pending' },
    );
    sm.setPodStatus(pod, {
      phase: 'Pending',
      initContainerStatuses: [cs('i1', { terminated: { exitCode: 0 } }), cs('i2', { running: {} }), cs('i3', { waiting: {} })],
      containerStatuses: [cs('app', { waiting: { reason: 'PodInitializing' } })],
    });
    sm.terminatePod(pod);
    const s = sm.getPodStatus('u1')!;
    expect(s.initContainerStatuses!.map((c) => c.state)).toEqual([{ terminated: { exitCode: 0 } }, UNKNOWN, { waiting: {} }]);
    expect(s.containerStatuses![0].state).toEqual({ waiting: { reason: 'PodInitializing' } });
    expect(s.phase).toBe('Failed');
  });
});
