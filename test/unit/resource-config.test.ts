import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import type { ResourceConfig } from '../../src/main/cgroups/cgroup-manager.js';
import { burstableTierShares, podRequestsAndLimits, resourceConfigForPod } from '../../src/main/cgroups/resource-config.js';

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };

function pod(containers: Res[], init: Res[] = [], extra: Record<string, unknown> = {}): Pod {
  return PodSchema.parse({
    metadata: { name: 'p', namespace: 'default', uid: 'u1' },
    spec: {
      containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'busybox', resources })),
      initContainers: init.map((resources, i) => ({ name: `i${i}`, image: 'busybox', resources })),
      ...extra,
    },
  });
}

const G = (cpu: string, memory: string): Res => ({ requests: { cpu, memory }, limits: { cpu, memory } });
const OPTS = { enforceCPULimits: true, cpuPeriodUs: 100_000 };
const Mi = 1024 ** 2;

describe('resourceConfigForPod (upstream v1.20 ResourceConfigForPod)', () => {
  it.each<[string, Pod, ResourceConfig]>([
    [
      'Guaranteed: shares, quota, period, memory',
      pod([G('500m', '128Mi')]),
      { cpuShares: 512, cpuQuota: 50_000, cpuPeriod: 100_000, memoryLimitBytes: 128 * Mi },
    ],
    [
      'Guaranteed, two containers: sums',
      pod([G('250m', '64Mi'), G('1', '64Mi')]),
      { cpuShares: 1280, cpuQuota: 125_000, cpuPeriod: 100_000, memoryLimitBytes: 128 * Mi },
    ],
    [
      'Guaranteed, tiny cpu: quota at least 1000µs',
      pod([G('1m', '8Mi')]),
      { cpuShares: 2, cpuQuota: 1000, cpuPeriod: 100_000, memoryLimitBytes: 8 * Mi },
    ],
    ['Burstable, requests only: shares only', pod([{ requests: { cpu: '100m', memory: '32Mi' } }]), { cpuShares: 102 }],
    [
      'Burstable, every container limited: quota and memory',
      pod([{ requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '64Mi' } }]),
      { cpuShares: 102, cpuQuota: 20_000, cpuPeriod: 100_000, memoryLimitBytes: 64 * Mi },
    ],
    [
      'Burstable, one container without limits: no quota, no memory limit',
      pod([{ requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '64Mi' } }, { requests: { memory: '16Mi' } }]),
      { cpuShares: 102 },
    ],
    [
      'Burstable, memory limited everywhere but not cpu',
      pod([{ requests: { cpu: '100m' }, limits: { memory: '64Mi' } }, { limits: { memory: '32Mi' } }]),
      { cpuShares: 102, memoryLimitBytes: 96 * Mi },
    ],
    ['BestEffort: 2 shares only', pod([{}]), { cpuShares: 2 }],
    [
      'an init container larger than the sum raises it',
      pod(
        [{ requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '64Mi' } }],
        [{ requests: { cpu: '1' }, limits: { cpu: '1', memory: '256Mi' } }],
      ),
      { cpuShares: 1024, cpuQuota: 100_000, cpuPeriod: 100_000, memoryLimitBytes: 256 * Mi },
    ],
    [
      'a smaller init container changes nothing',
      pod([G('500m', '128Mi')], [G('100m', '16Mi')]),
      { cpuShares: 512, cpuQuota: 50_000, cpuPeriod: 100_000, memoryLimitBytes: 128 * Mi },
    ],
    [
      'overhead is added to requests and to the limits that are set',
      pod([G('500m', '128Mi')], [], { overhead: { cpu: '100m', memory: '16Mi' } }),
      { cpuShares: 614, cpuQuota: 60_000, cpuPeriod: 100_000, memoryLimitBytes: 144 * Mi },
    ],
  ])('%s', (_, p, expected) => {
    expect(resourceConfigForPod(p, OPTS)).toEqual(expected);
  });

  it('cpuCFSQuota false: the quota is -1 (unlimited)', () => {
    expect(resourceConfigForPod(pod([G('500m', '128Mi')]), { ...OPTS, enforceCPULimits: false })).toEqual({
      cpuShares: 512,
      cpuQuota: -1,
      cpuPeriod: 100_000,
      memoryLimitBytes: 128 * Mi,
    });
  });

  it('limits without overhead stay unset', () => {
    const { limits } = podRequestsAndLimits(pod([{ requests: { cpu: '100m' } }], [], { overhead: { cpu: '50m', memory: '8Mi' } }));
    expect(limits.size).toBe(0);
  });
});

describe('burstableTierShares (upstream setCPUCgroupConfig)', () => {
  it.each<[string, Pod[], number]>([
    ['no pods: 2 shares', [], 2],
    ['only Guaranteed and BestEffort pods count nothing', [pod([G('2', '1Gi')]), pod([{}])], 2],
    [
      'the sum of Burstable cpu requests',
      [pod([{ requests: { cpu: '250m' } }]), pod([{ requests: { cpu: '750m', memory: '1Mi' } }])],
      1024,
    ],
    ['a Burstable pod with a memory request only counts 0', [pod([{ requests: { memory: '10Mi' } }])], 2],
  ])('%s', (_, pods, shares) => {
    expect(burstableTierShares(pods)).toBe(shares);
  });
});
