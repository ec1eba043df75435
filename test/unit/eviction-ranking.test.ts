import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import type { PodUsage } from '../../src/main/eviction/eviction-stats.js';
import {
  evictionMessage,
  rankDiskPressure,
  rankMemoryPressure,
  rankPidPressure,
  statsFuncOf,
  type FsStatsType,
} from '../../src/main/eviction/ranking.js';
import { storageLimitViolations } from '../../src/main/eviction/local-storage.js';

const MI = 1024n * 1024n;
const LOW = -1;
const HIGH = 1;

function pod(name: string, priority: number, requests: Record<string, string> = {}, opts: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { priority, containers: [{ name, image: 'busybox', resources: { requests } }], ...opts },
  };
}

const memStats = (p: Pod, mi: bigint): PodUsage => ({
  uid: p.metadata.uid!,
  memoryWorkingSetBytes: mi * MI,
  containers: [{ name: p.metadata.name!, memoryWorkingSetBytes: mi * MI }],
  volumes: [],
});

/** upstream newPodDiskStats: rootfs and logs of the container, and the local volume. */
const diskStats = (p: Pod, root: bigint, logs: bigint, vol: bigint): PodUsage => ({
  uid: p.metadata.uid!,
  containers: [
    { name: p.metadata.name!, rootfs: { usedBytes: root * MI, inodesUsed: root }, logs: { usedBytes: logs * MI, inodesUsed: logs } },
  ],
  volumes: [{ name: 'local-volume', usedBytes: vol * MI, inodesUsed: vol }],
});

const names = (pods: Pod[]) => pods.map((p) => p.metadata.name);

describe('memory ranking (upstream helpers_test)', () => {
  it('TestOrderedByExceedsRequestMemory: pods over their request first', () => {
    const below = pod('below-requests', LOW, { memory: '200Mi' });
    const exceeds = pod('exceeds-requests', HIGH, { memory: '100Mi' });
    const pods = [below, exceeds];
    rankMemoryPressure(pods, statsFuncOf([memStats(below, 199n), memStats(exceeds, 101n)]));
    expect(names(pods)).toEqual(['exceeds-requests', 'below-requests']);
  });

  it('TestOrderedByPriorityMemory: over request, then priority, then usage above request', () => {
    const p = [
      pod('above-low-high', LOW),
      pod('above-low-low', LOW),
      pod('above-high-high', HIGH, { memory: '100Mi' }),
      pod('above-high-low', HIGH, { memory: '100Mi' }),
      pod('below-low-high', LOW, { memory: '1Gi' }),
      pod('below-low-low', LOW, { memory: '1Gi' }),
      pod('below-high-high', HIGH, { memory: '1Gi' }),
      pod('below-high-low', HIGH, { memory: '1Gi' }),
    ];
    const usage = [500n, 50n, 600n, 150n, 800n, 200n, 800n, 200n];
    const stats = statsFuncOf(p.map((x, i) => memStats(x, usage[i])));
    const pods = [...p].reverse();
    rankMemoryPressure(pods, stats);
    expect(names(pods)).toEqual(names(p));
  });

  it('a pod without stats ranks first', () => {
    const a = pod('a', 0);
    const b = pod('no-stats', 0);
    const pods = [a, b];
    rankMemoryPressure(pods, statsFuncOf([memStats(a, 500n)]));
    expect(names(pods)).toEqual(['no-stats', 'a']);
  });
});

describe('disk ranking (upstream TestOrderedByPriorityDisk)', () => {
  const vol = { volumes: [{ name: 'local-volume', emptyDir: {} }] };
  const p = [
    pod('above-low-high', LOW, {}, vol),
    pod('above-low-low', LOW, {}, vol),
    pod('above-high-high', HIGH, { 'ephemeral-storage': '100Mi' }, vol),
    pod('above-high-low', HIGH, { 'ephemeral-storage': '100Mi' }, vol),
    pod('below-low-high', LOW, { 'ephemeral-storage': '1Gi' }, vol),
    pod('below-low-low', LOW, { 'ephemeral-storage': '1Gi' }, vol),
    pod('below-high-high', HIGH, { 'ephemeral-storage': '1Gi' }, vol),
    pod('below-high-low', HIGH, { 'ephemeral-storage': '1Gi' }, vol),
  ];
  const usage: [bigint, bigint, bigint][] = [
    [200n, 100n, 200n],
    [10n, 10n, 30n],
    [200n, 150n, 250n],
    [90n, 50n, 10n],
    [500n, 200n, 100n],
    [50n, 100n, 50n],
    [250n, 500n, 50n],
    [100n, 60n, 40n],
  ];
  const stats = statsFuncOf(p.map((x, i) => diskStats(x, ...usage[i])));
  const all: FsStatsType[] = ['root', 'logs', 'localVolumeSource'];

  it('orders by over-request, priority, then usage above request', () => {
    const pods = [...p].reverse();
    rankDiskPressure(pods, stats, all, false);
    expect(names(pods)).toEqual(names(p));
  });

  it('counts only the measured file systems (dedicated image fs: logs and volumes)', () => {
    const a = pod('big-rootfs', 0, {}, vol);
    const b = pod('big-volume', 0, {}, vol);
    const s = statsFuncOf([diskStats(a, 900n, 1n, 1n), diskStats(b, 1n, 1n, 100n)]);
    const pods = [a, b];
    rankDiskPressure(pods, s, ['logs', 'localVolumeSource'], false);
    expect(names(pods)).toEqual(['big-volume', 'big-rootfs']);
    rankDiskPressure(pods, s, all, false);
    expect(names(pods)).toEqual(['big-rootfs', 'big-volume']);
  });

  it('a memory-backed emptyDir does not count', () => {
    const a = pod('tmpfs', 0, {}, { volumes: [{ name: 'local-volume', emptyDir: { medium: 'Memory' } }] });
    const b = pod('disk', 0, {}, vol);
    const pods = [a, b];
    rankDiskPressure(pods, statsFuncOf([diskStats(a, 1n, 1n, 500n), diskStats(b, 1n, 1n, 10n)]), all, false);
    expect(names(pods)).toEqual(['disk', 'tmpfs']);
  });
});

describe('pid ranking (upstream TestOrderedByPriorityProcess)', () => {
  it('priority, then process count', () => {
    const p = [pod('low-high', LOW), pod('low-low', LOW), pod('high-high', HIGH), pod('high-low', HIGH)];
    const procs = [20, 6, 20, 5];
    const stats = statsFuncOf(p.map((x, i) => ({ uid: x.metadata.uid!, containers: [], volumes: [], processes: procs[i] })));
    const pods = [...p].reverse();
    rankPidPressure(pods, stats);
    expect(names(pods)).toEqual(names(p));
  });
});

describe('evictionMessage', () => {
  it('names the resource and each container over its request', () => {
    const p = pod('hog', 0, { memory: '100Mi' });
    expect(evictionMessage('memory', p, statsFuncOf([memStats(p, 400n)]))).toBe(
      'The node was low on resource: memory. Container hog was using 400Mi, which exceeds its request of 100Mi. ',
    );
  });

  it('an ephemeral-storage message counts rootfs and logs; no request prints 0', () => {
    const p = pod('writer', 0);
    const u = diskStats(p, 1n, 1n, 40n);
    expect(evictionMessage('ephemeral-storage', p, statsFuncOf([u]))).toBe(
      'The node was low on resource: ephemeral-storage. Container writer was using 2Mi, which exceeds its request of 0. ',
    );
  });

  it('is only the resource for inodes or without stats', () => {
    const p = pod('x', 0);
    expect(evictionMessage('inodes', p, statsFuncOf([]))).toBe('The node was low on resource: inodes. ');
  });
});

describe('storageLimitViolations (upstream localStorageEviction)', () => {
  it('emptyDir over its sizeLimit; one within it is left alone', () => {
    const over = pod('over', 0, {}, { volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '10Mi' } }] });
    const within = pod('within', 0, {}, { volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '10Mi' } }] });
    const u = (p: Pod, mi: bigint): PodUsage => ({
      uid: p.metadata.uid!,
      containers: [],
      volumes: [{ name: 'scratch', usedBytes: mi * MI }],
    });
    const v = storageLimitViolations([over, within], statsFuncOf([u(over, 11n), u(within, 9n)]), false);
    expect(v).toEqual([
      { pod: over, signal: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "scratch" exceeds the limit "10Mi". ' },
    ]);
  });

  it('a container over its ephemeral-storage limit (its logs and writable layer)', () => {
    const p = pod('c', 0);
    p.spec.containers[0].resources = { limits: { 'ephemeral-storage': '5Mi' } };
    const u: PodUsage = {
      uid: p.metadata.uid!,
      containers: [{ name: 'c', rootfs: { usedBytes: 3n * MI }, logs: { usedBytes: 3n * MI } }],
      volumes: [],
    };
    // The pod's total (6Mi) is over the pod limit (5Mi) too; upstream checks the pod first.
    expect(storageLimitViolations([p], statsFuncOf([u]), false)[0]?.message).toBe(
      'Pod ephemeral local storage usage exceeds the total limit of containers 5Mi. ',
    );
    // With a dedicated image fs the writable layer does not count.
    expect(storageLimitViolations([p], statsFuncOf([u]), true)).toEqual([]);
  });

  it('the container check when the pod total is within limits', () => {
    const p = pod('a', 0);
    p.spec.containers = [
      { name: 'a', image: 'x', resources: { limits: { 'ephemeral-storage': '1Mi' } } },
      { name: 'b', image: 'x', resources: { limits: { 'ephemeral-storage': '100Mi' } } },
    ];
    const u: PodUsage = { uid: p.metadata.uid!, containers: [{ name: 'a', logs: { usedBytes: 2n * MI } }], volumes: [] };
    expect(storageLimitViolations([p], statsFuncOf([u]), false)).toEqual([
      { pod: p, signal: 'ephemeralcontainerfs.limit', message: 'Container a exceeded its local ephemeral storage limit "1Mi". ' },
    ]);
  });
});
