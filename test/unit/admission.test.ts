import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/pod.js';
import { allocatable, canAdmitPod, podRequests, rejectedPodStatus, type AdmitNode } from '../../src/main/admission/admit.js';

const node: AdmitNode = { allocatable: { cpu: '1', memory: '1Gi', pods: 3 } };

function pod(uid: string, containers: Container[], mutate: (p: Pod) => void = () => {}): Pod {
  const p: Pod = { metadata: { uid, name: uid, namespace: 'default' }, spec: { containers } };
  mutate(p);
  return p;
}
const req = (name: string, cpu?: string, memory?: string): Container => ({
  name,
  resources: { requests: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) } },
});

describe('canAdmitPod', () => {
  it.each<[string, Pod, Pod[], ReturnType<typeof canAdmitPod>]>([
    ['fits on an empty node', pod('a', [req('c', '500m', '256Mi')]), [], { admit: true }],
    ['fits exactly', pod('a', [req('c', '500m', '512Mi')]), [pod('b', [req('c', '500m', '512Mi')])], { admit: true }],
    ['best-effort pod fits while pods remain', pod('a', [{ name: 'c' }]), [pod('b', [req('c', '1', '1Gi')])], { admit: true }],
    [
      'OutOfpods',
      pod('a', [{ name: 'c' }]),
      [pod('b', [{ name: 'c' }]), pod('c', [{ name: 'c' }]), pod('d', [{ name: 'c' }])],
      { admit: false, reason: 'OutOfpods', message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3" },
    ],
    [
      'OutOfcpu',
      pod('a', [req('c', '2')]),
      [],
      { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000" },
    ],
    [
      'OutOfcpu counting active pods',
      pod('a', [req('c', '600m')]),
      [pod('b', [req('c', '500m')])],
      { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 600, used: 500, capacity: 1000" },
    ],
    [
      'OutOfmemory',
      pod('a', [req('c', '100m', '1Gi')]),
      [pod('b', [req('c', undefined, '1Mi')])],
      {
        admit: false,
        reason: 'OutOfmemory',
        message: "Node didn't have enough resource: memory, requested: 1073741824, used: 1048576, capacity: 1073741824",
      },
    ],
    [
      'terminal pods do not count',
      pod('a', [req('c', '1')]),
      [pod('b', [req('c', '1')], (p) => (p.status = { phase: 'Succeeded' }))],
      { admit: true },
    ],
    ['the pod itself does not count', pod('a', [req('c', '1')]), [pod('a', [req('c', '1')])], { admit: true }],
  ])('%s', (_n, p, active, want) => {
    expect(canAdmitPod(p, active, node)).toEqual(want);
  });

  it('init containers: the largest init container wins over the regular sum', () => {
    const p = pod('a', [req('c1', '200m'), req('c2', '200m')], (x) => (x.spec.initContainers = [req('i1', '1500m'), req('i2', '100m')]));
    expect(podRequests(p).milliCpu).toBe(1500n);
    expect(canAdmitPod(p, [], node)).toMatchObject({
      admit: false,
      reason: 'OutOfcpu',
      message: expect.stringContaining('requested: 1500') as string,
    });
    const small = pod('a', [req('c1', '600m')], (x) => (x.spec.initContainers = [req('i1', '300m')]));
    expect(podRequests(small).milliCpu).toBe(600n);
  });

  it('sidecars add to the regular sum and to later init containers; overhead is added', () => {
    const p = pod('a', [req('c', '100m')], (x) => {
      x.spec.initContainers = [{ ...req('side', '200m'), restartPolicy: 'Always' }, req('init', '500m')];
      x.spec['overhead'] = { cpu: '50m', memory: '10Mi' };
    });
    expect(podRequests(p)).toEqual({ milliCpu: 750n, memory: 10n * 1024n * 1024n });
  });

  it.each<[string, Pod, string]>([
    ['an unparseable quantity', pod('a', [req('c', 'lots')]), 'spec.containers[0].resources.requests[cpu]: Invalid value: "lots"'],
    ['a negative request', pod('a', [req('c', undefined, '-1Mi')]), 'must be greater than or equal to 0'],
    [
      'duplicate container names',
      pod('a', [{ name: 'c' }], (p) => (p.spec.initContainers = [{ name: 'c' }])),
      'spec.containers[0].name: Duplicate value: "c"',
    ],
  ])('rejects %s as FailedValidation', (_n, p, text) => {
    const r = canAdmitPod(p, [], node);
    expect(r).toMatchObject({ admit: false, reason: 'FailedValidation' });
    expect(r.admit === false && r.message).toContain(text);
  });
});

describe('rejectedPodStatus', () => {
  it('is Failed with the reason and the upstream message prefix', () => {
    const now = Date.UTC(2024, 4, 6, 7, 8, 9, 500);
    expect(rejectedPodStatus(pod('a', [req('c', '2', '1Gi')]), 'OutOfcpu', 'no cpu', now)).toEqual({
      phase: 'Failed',
      reason: 'OutOfcpu',
      message: 'Pod was rejected: no cpu',
      qosClass: 'Burstable',
      startTime: '2024-05-06T07:08:09Z',
    });
  });
});

describe('allocatable', () => {
  it.each<[string, Parameters<typeof allocatable>, ReturnType<typeof allocatable>]>([
    ['no reservations', [{ cpu: '4', memory: '8Gi', pods: 110 }], { cpu: '4000m', memory: String(8 * 2 ** 30), pods: 110 }],
    [
      'system + kube reserved + hard eviction',
      [{ cpu: '4', memory: '8Gi', pods: 110 }, { cpu: '500m', memory: '1Gi' }, { cpu: '100m', memory: '512Mi' }, '100Mi'],
      { cpu: '3400m', memory: String(8 * 2 ** 30 - 2 ** 30 - 512 * 2 ** 20 - 100 * 2 ** 20), pods: 110 },
    ],
    ['percentage eviction threshold', [{ cpu: '1', memory: '1000', pods: 10 }, {}, {}, '5%'], { cpu: '1000m', memory: '950', pods: 10 }],
    [
      'never negative',
      [
        { cpu: '1', memory: '1Mi', pods: 10 },
        { cpu: '2', memory: '2Mi' },
      ],
      { cpu: '0m', memory: '0', pods: 10 },
    ],
  ])('%s', (_n, args, want) => {
    expect(allocatable(...args)).toEqual(want);
  });
});

describe('canAdmitPod accounting of active pods', () => {
  it('uses an active pod’s current spec after the spec is replaced (the memo is keyed by spec)', () => {
    const active = pod('a', [req('c', '900m')]);
    expect(canAdmitPod(pod('b', [req('c', '800m')]), [active], node)).toMatchObject({ admit: false, reason: 'OutOfcpu' });
    active.spec = { containers: [req('c', '100m')] };
    expect(canAdmitPod(pod('b', [req('c', '800m')]), [active], node)).toEqual({ admit: true });
  });
});
