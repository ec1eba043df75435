import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import { computePodQOS, containerOOMScoreAdjust, getPodQOS, isNodeCriticalPod } from '../../src/pod/qos.js';

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
const pod = (containers: Res[], inits: Res[] = [], extra: Record<string, unknown> = {}): Pod =>
  PodSchema.parse({
    metadata: { name: 'p', namespace: 'ns', ...(extra['metadata'] as object) },
    spec: {
      containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'i', resources })),
      initContainers: inits.map((resources, i) => ({ name: `i${i}`, image: 'i', resources })),
      ...(extra['spec'] as object),
    },
  });

const G = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };

describe('computePodQOS', () => {
  it.each<[string, Res[], Res[], string]>([
    ['no resources', [{}], [], 'BestEffort'],
    ['zero requests are ignored', [{ requests: { cpu: '0' } }], [], 'BestEffort'],
    ['non-QoS resources are ignored', [{ requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } }], [], 'BestEffort'],
    ['requests == limits for cpu and memory', [G, G], [], 'Guaranteed'],
    [
      'equal in value, different spelling',
      [{ requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '1', memory: '1Gi' } }],
      [],
      'Guaranteed',
    ],
    ['request lower than limit', [{ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }], [], 'Burstable'],
    ['one container without limits', [G, {}], [], 'Burstable'],
    ['only a cpu limit', [{ requests: { cpu: '1' }, limits: { cpu: '1' } }], [], 'Burstable'],
    ['init container counts', [G], [{ requests: { cpu: '1' } }], 'Burstable'],
    ['limits only (not defaulted) is Burstable, as upstream', [{ limits: { cpu: '1', memory: '1Gi' } }], [], 'Burstable'],
  ])('%s → %s', (_n, cs, inits, want) => {
    expect(computePodQOS(pod(cs, inits))).toBe(want);
  });

  it('getPodQOS prefers status.qosClass', () => {
    const p = pod([{}]);
    p.status = { qosClass: 'Guaranteed' };
    expect(getPodQOS(p)).toBe('Guaranteed');
  });
});

describe('containerOOMScoreAdjust', () => {
  const cap = 4n * 1024n ** 3n; // 4 GiB
  it('Guaranteed → -997, BestEffort → 1000', () => {
    const g = pod([G]);
    expect(containerOOMScoreAdjust(g, g.spec.containers[0], cap)).toBe(-997);
    const b = pod([{}]);
    expect(containerOOMScoreAdjust(b, b.spec.containers[0], cap)).toBe(1000);
  });
  it('Burstable: 1000 - 1000*request/capacity', () => {
    const p = pod([{ requests: { memory: '1Gi' } }]);
    expect(containerOOMScoreAdjust(p, p.spec.containers[0], cap)).toBe(750);
  });
  it('Burstable: at least 3, and 999 rather than 1000', () => {
    const big = pod([{ requests: { memory: '8Gi' } }]);
    expect(containerOOMScoreAdjust(big, big.spec.containers[0], cap)).toBe(3);
    const cpuOnly = pod([{ requests: { cpu: '100m' } }]);
    expect(containerOOMScoreAdjust(cpuOnly, cpuOnly.spec.containers[0], cap)).toBe(999);
  });
  it('unknown capacity (0): Burstable gets 999', () => {
    const p = pod([{ requests: { memory: '1Gi' } }]);
    expect(containerOOMScoreAdjust(p, p.spec.containers[0], 0n)).toBe(999);
  });
  it('node-critical static pods get -997 whatever their QoS', () => {
    const p = pod([{}], [], {
      metadata: { annotations: { 'kubernetes.io/config.source': 'file' } },
      spec: { priorityClassName: 'system-node-critical' },
    });
    expect(isNodeCriticalPod(p)).toBe(true);
    expect(containerOOMScoreAdjust(p, p.spec.containers[0], cap)).toBe(-997);
    const api = pod([{}], [], {
      metadata: { annotations: { 'kubernetes.io/config.source': 'api' } },
      spec: { priorityClassName: 'system-node-critical' },
    });
    expect(isNodeCriticalPod(api)).toBe(false);
  });
});
