import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import type { PodStatus } from '../../src/api/pod-status.js';
import { StatusManager } from '../../src/main/status/status-manager.js';

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
