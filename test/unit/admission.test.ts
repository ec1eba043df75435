import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/pod.js';
import {
  allocatable,
  canAdmitPod,
  filterOutInactivePods,
  podRequests,
  rejectedPodStatus,
  type AdmitNode,
} from '../../src/main/admission/admit.js';
import type { NodeSelectorTerm } from '../../src/main/admission/node-affinity.js';
import { normalizeSysctlName, safeSysctlAllowlist } from '../../src/main/admission/sysctls.js';

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

  it('a pod whose requests cannot be computed is UnexpectedAdmissionError (FailedValidation is not an admission reason)', () => {
    const r = canAdmitPod(pod('a', [req('c', 'lots')]), [], node);
    expect(r).toMatchObject({ admit: false, reason: 'UnexpectedAdmissionError' });
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

describe('upstream admission checks beyond cpu and memory', () => {
  const full: AdmitNode = {
    allocatable: {
      cpu: '4',
      memory: '8Gi',
      pods: 110,
      'ephemeral-storage': '10Gi',
      scalar: { 'hugepages-2Mi': '0', 'example.com/gpu': '2' },
    },
    name: 'n1',
    labels: { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', zone: 'a', gen: '5' },
    sysctlAllowlist: safeSysctlAllowlist([6, 1]),
  };
  const port = (hostPort: number, extra: Record<string, unknown> = {}): Container => ({
    name: `p${hostPort}`,
    ports: [{ containerPort: 80, hostPort, protocol: 'TCP', ...extra }],
  });
  const affinity = (terms: NodeSelectorTerm[]) => (p: Pod) => {
    p.spec['affinity'] = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } };
  };
  const predicate = (name: string, desc: string) => ({ admit: false, reason: name, message: `Predicate ${name} failed: ${desc}` });
  const PORTS = "node(s) didn't have free ports for the requested pod ports";
  const AFFINITY = "node(s) didn't match Pod's node affinity/selector";

  it.each<[string, Pod, Pod[], ReturnType<typeof canAdmitPod>]>([
    ['hostPort conflict (NodePorts)', pod('a', [port(8080)]), [pod('b', [port(8080)])], predicate('NodePorts', PORTS)],
    ['hostPort: other protocol is free', pod('a', [port(8080, { protocol: 'UDP' })]), [pod('b', [port(8080)])], { admit: true }],
    [
      'hostPort: specific IP vs 0.0.0.0 conflicts',
      pod('a', [port(8080, { hostIP: '10.0.0.1' })]),
      [pod('b', [port(8080)])],
      predicate('NodePorts', PORTS),
    ],
    [
      'hostPort: two specific IPs do not conflict',
      pod('a', [port(8080, { hostIP: '10.0.0.1' })]),
      [pod('b', [port(8080, { hostIP: '10.0.0.2' })])],
      { admit: true },
    ],
    [
      'hostPort of a sidecar counts; an ordinary init container’s does not',
      pod('a', [port(9090)]),
      [pod('b', [{ name: 'c' }], (p) => (p.spec.initContainers = [{ ...port(9090), restartPolicy: 'Always' }]))],
      predicate('NodePorts', PORTS),
    ],
    [
      'init container hostPort is not held',
      pod('a', [port(9091)]),
      [pod('b', [{ name: 'c' }], (p) => (p.spec.initContainers = [port(9091)]))],
      { admit: true },
    ],
    ['nodeSelector matches', pod('a', [{ name: 'c' }], (p) => (p.spec.nodeSelector = { zone: 'a' })), [], { admit: true }],
    [
      'nodeSelector mismatch (NodeAffinity)',
      pod('a', [{ name: 'c' }], (p) => (p.spec.nodeSelector = { zone: 'b' })),
      [],
      predicate('NodeAffinity', AFFINITY),
    ],
    [
      'required node affinity: one term of two matches (In, Gt)',
      pod(
        'a',
        [{ name: 'c' }],
        affinity([
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['x'] }] },
          { matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] },
        ]),
      ),
      [],
      { admit: true },
    ],
    [
      'required node affinity: DoesNotExist fails, matchFields metadata.name NotIn fails',
      pod(
        'a',
        [{ name: 'c' }],
        affinity([
          { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] },
          { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] },
        ]),
      ),
      [],
      predicate('NodeAffinity', AFFINITY),
    ],
    [
      'required node affinity: an empty term matches nothing',
      pod('a', [{ name: 'c' }], affinity([{}])),
      [],
      predicate('NodeAffinity', AFFINITY),
    ],
    [
      'spec.nodeName of another node (NodeName)',
      pod('a', [{ name: 'c' }], (p) => (p.spec.nodeName = 'other')),
      [],
      predicate('NodeName', "node(s) didn't match the requested node name"),
    ],
    [
      'ephemeral-storage (OutOfephemeral-storage)',
      pod('a', [{ name: 'c', resources: { requests: { 'ephemeral-storage': '8Gi' } } }]),
      [pod('b', [{ name: 'c', resources: { requests: { 'ephemeral-storage': '4Gi' } } }])],
      {
        admit: false,
        reason: 'OutOfephemeral-storage',
        message: "Node didn't have enough resource: ephemeral-storage, requested: 8589934592, used: 4294967296, capacity: 10737418240",
      },
    ],
    [
      'an extended resource the node has is accounted',
      pod('a', [{ name: 'c', resources: { requests: { 'example.com/gpu': '3' } } }]),
      [],
      {
        admit: false,
        reason: 'OutOfexample.com/gpu',
        message: "Node didn't have enough resource: example.com/gpu, requested: 3, used: 0, capacity: 2",
      },
    ],
    [
      'an extended resource the node does not have is ignored (upstream)',
      pod('a', [{ name: 'c', resources: { requests: { 'other.io/fpga': '1' } } }]),
      [],
      { admit: true },
    ],
    [
      'hugepages the node lacks',
      pod('a', [{ name: 'c', resources: { requests: { 'hugepages-2Mi': '4Mi' } } }]),
      [],
      {
        admit: false,
        reason: 'OutOfhugepages-2Mi',
        message: "Node didn't have enough resource: hugepages-2Mi, requested: 4194304, used: 0, capacity: 0",
      },
    ],
    [
      'kubernetes.io/os label of another OS',
      pod('a', [{ name: 'c' }], (p) => (p.metadata.labels = { 'kubernetes.io/os': 'windows' })),
      [],
      {
        admit: false,
        reason: 'PodOSSelectorNodeLabelDoesNotMatch',
        message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
      },
    ],
    [
      'spec.os of another OS',
      pod('a', [{ name: 'c' }], (p) => (p.spec['os'] = { name: 'windows' })),
      [],
      { admit: false, reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" },
    ],
    [
      'a safe sysctl',
      pod('a', [{ name: 'c' }], (p) => (p.spec.securityContext = { sysctls: [{ name: 'net.ipv4.tcp_syncookies', value: '1' }] })),
      [],
      { admit: true },
    ],
    [
      'an unsafe sysctl (SysctlForbidden)',
      pod('a', [{ name: 'c' }], (p) => (p.spec.securityContext = { sysctls: [{ name: 'kernel.msgmax', value: '1' }] })),
      [],
      { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' },
    ],
    [
      'a net sysctl with hostNetwork',
      pod('a', [{ name: 'c' }], (p) => {
        p.spec.hostNetwork = true;
        p.spec.securityContext = { sysctls: [{ name: 'net/ipv4/ip_local_port_range', value: '1 2' }] };
      }),
      [],
      {
        admit: false,
        reason: 'SysctlForbidden',
        message: 'forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host net enabled',
      },
    ],
  ])('%s', (_n, p, active, want) => {
    expect(canAdmitPod(p, active, full)).toEqual(want);
  });

  it('rejects with NodeShutdown while the node shuts down', () => {
    expect(canAdmitPod(pod('a', [{ name: 'c' }]), [], { ...full, shuttingDown: () => true })).toEqual({
      admit: false,
      reason: 'NodeShutdown',
      message: 'Pod was rejected as the node is shutting down.',
    });
  });

  it('the safe sysctl list depends on the kernel; names are normalized', () => {
    expect(safeSysctlAllowlist([4, 4])).not.toContain('net.ipv4.tcp_keepalive_time');
    expect(safeSysctlAllowlist([4, 6])).toContain('net.ipv4.tcp_fin_timeout');
    expect(normalizeSysctlName('net/ipv4/conf/eno2.100/rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
  });
});

describe('filterOutInactivePods (upstream isAdmittedPodTerminal)', () => {
  const pods = ['run', 'sourceDone', 'kubeletDone', 'stillTerminating', 'terminated'].map((u) => pod(u, [{ name: 'c' }]));
  pods[1].status = { phase: 'Succeeded' };
  const statuses: Record<string, { phase: 'Failed' }> = { kubeletDone: { phase: 'Failed' }, stillTerminating: { phase: 'Failed' } };
  it('terminal pods stop counting as soon as the status manager says so, unless still terminating', () => {
    const active = filterOutInactivePods(pods, {
      isKnownTerminated: (uid) => uid === 'terminated',
      isTerminationRequested: (uid) => uid === 'stillTerminating',
      statusOf: (uid) => statuses[uid],
    });
    expect(active.map((p) => p.metadata.uid)).toEqual(['run', 'stillTerminating']);
  });
});

describe('--max-containers-per-pod (kubelet-ts only; upstream has no bound)', () => {
  const names = (prefix: string, n: number): Container[] => Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}` }));
  const limited = (max: number): AdmitNode => ({ ...node, maxContainersPerPod: max });

  it('counts init, regular and ephemeral containers together against the limit', () => {
    const p = pod('a', names('c', 2), (x) => {
      x.spec.initContainers = names('i', 1);
      x.spec['ephemeralContainers'] = names('e', 1);
    });
    expect(canAdmitPod(p, [], limited(4))).toEqual({ admit: true });
    expect(canAdmitPod(p, [], limited(3))).toEqual({
      admit: false,
      reason: 'TooManyContainers',
      message:
        "the pod has 4 containers (init, regular and ephemeral), over this node's limit of 3 (--max-containers-per-pod; 0 = no limit)",
    });
  });

  it('0 or unset is no limit, as upstream', () => {
    const p = pod('a', names('c', 10_000));
    expect(canAdmitPod(p, [], limited(0))).toEqual({ admit: true });
    expect(canAdmitPod(p, [], node)).toEqual({ admit: true });
  });

  it('is checked first: a full node reports the container count, not OutOfpods', () => {
    const others = [pod('b', [{ name: 'c' }]), pod('c', [{ name: 'c' }]), pod('d', [{ name: 'c' }])];
    expect(canAdmitPod(pod('a', names('c', 5)), others, limited(4))).toMatchObject({ admit: false, reason: 'TooManyContainers' });
  });
});
