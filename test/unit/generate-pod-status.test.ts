import { describe, expect, it } from 'vitest';
import type { ContainerStatusV1, Pod, PodStatus as ApiPodStatus } from '../../src/api/pod.js';
import type { ContainerStatus, PodStatus as RuntimePodStatus } from '../../src/runtime/types.js';
import { generateAPIPodStatus, rfc3339, type GenerateStatusOptions } from '../../src/main/status/generate-pod-status.js';

const T0 = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
const NS = (ms: number) => BigInt(ms) * 1_000_000n;

function basePod(mutate: (p: Pod) => void = () => {}): Pod {
  const p: Pod = {
    metadata: { uid: 'u1', name: 'web', namespace: 'default' },
    spec: {
      containers: [
        { name: 'app', image: 'busybox' },
        { name: 'side', image: 'busybox' },
      ],
      restartPolicy: 'Always',
    },
  };
  mutate(p);
  return p;
}

let seq = 0;
function ctr(name: string, state: ContainerStatus['state'], over: Partial<ContainerStatus> = {}): ContainerStatus {
  seq++;
  return {
    id: `${name}-${seq}`,
    name,
    state,
    createdAt: NS(T0 - 10_000 + seq),
    startedAt: NS(T0 - 5000),
    finishedAt: state === 'exited' ? NS(T0 - 1000) : 0n,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'docker.io/library/busybox:latest',
    imageRef: 'sha256:abc',
    restartCount: 0,
    hash: '',
    sandboxId: 'sb1',
    ...over,
  };
}

function runtime(containers: ContainerStatus[], mutate: (r: RuntimePodStatus) => void = () => {}): RuntimePodStatus {
  const r: RuntimePodStatus = {
    uid: 'u1',
    name: 'web',
    namespace: 'default',
    ips: ['10.0.0.5', 'fd00::5'],
    sandboxStatuses: [{ id: 'sb1', state: 'ready', createdAt: NS(T0 - 20_000), attempt: 0, ips: ['10.0.0.5'], hostNetwork: false }],
    containerStatuses: containers,
    timestamp: T0,
  };
  mutate(r);
  return r;
}

const gen = (pod: Pod, rt: RuntimePodStatus | undefined, o: Partial<GenerateStatusOptions> = {}) =>
  generateAPIPodStatus(pod, rt, { now: T0, nodeIP: '192.168.1.10', ...o });
const cs = (s: ApiPodStatus, name: string): ContainerStatusV1 =>
  [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? [])].find((c) => c.name === name)!;
const cond = (s: ApiPodStatus, type: string) => s.conditions!.find((c) => c.type === type)!;

describe('generateAPIPodStatus: phase', () => {
  const exited = (code: number) => ({ exitCode: code, reason: code === 0 ? 'Completed' : 'Error' });
  it.each<[string, (p: Pod) => void, () => ContainerStatus[], string]>([
    ['all running → Running', () => {}, () => [ctr('app', 'running'), ctr('side', 'running')], 'Running'],
    ['nothing created yet → Pending', () => {}, () => [], 'Pending'],
    ['one created, one running → Pending', () => {}, () => [ctr('app', 'running'), ctr('side', 'created')], 'Pending'],
    [
      'Never + exit 1 → Failed',
      (p) => (p.spec.restartPolicy = 'Never'),
      () => [ctr('app', 'exited', exited(0)), ctr('side', 'exited', exited(1))],
      'Failed',
    ],
    [
      'Never + all exit 0 → Succeeded',
      (p) => (p.spec.restartPolicy = 'Never'),
      () => [ctr('app', 'exited', exited(0)), ctr('side', 'exited', exited(0))],
      'Succeeded',
    ],
    [
      'OnFailure + exit 0 → Succeeded',
      (p) => (p.spec.restartPolicy = 'OnFailure'),
      () => [ctr('app', 'exited', exited(0)), ctr('side', 'exited', exited(0))],
      'Succeeded',
    ],
    [
      'OnFailure + exit 1 → Running (restarting)',
      (p) => (p.spec.restartPolicy = 'OnFailure'),
      () => [ctr('app', 'exited', exited(0)), ctr('side', 'exited', exited(1))],
      'Running',
    ],
    ['Always + exited → Running', () => {}, () => [ctr('app', 'exited', exited(0)), ctr('side', 'exited', exited(2))], 'Running'],
    [
      'Never + one exited, one running → Running',
      (p) => (p.spec.restartPolicy = 'Never'),
      () => [ctr('app', 'exited', exited(1)), ctr('side', 'running')],
      'Running',
    ],
  ])('%s', (_n, mutate, containers, phase) => {
    expect(gen(basePod(mutate), runtime(containers())).phase).toBe(phase);
  });

  it('podIsTerminal: Always + all exited 0 → Succeeded', () => {
    const rt = runtime([ctr('app', 'exited'), ctr('side', 'exited')]);
    expect(gen(basePod(), rt, { podIsTerminal: true }).phase).toBe('Succeeded');
  });

  it('init container running → Pending, regular containers waiting PodInitializing', () => {
    const pod = basePod((p) => (p.spec.initContainers = [{ name: 'init', image: 'busybox' }]));
    const s = gen(pod, runtime([ctr('init', 'running')]));
    expect(s.phase).toBe('Pending');
    expect(cs(s, 'app').state).toEqual({ waiting: { reason: 'PodInitializing' } });
    expect(cs(s, 'init').state?.running?.startedAt).toBe(rfc3339(T0 - 5000));
    expect(cond(s, 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [init]',
    });
  });

  it('init container failed with restartPolicy Never → Failed', () => {
    const pod = basePod((p) => {
      p.spec.restartPolicy = 'Never';
      p.spec.initContainers = [{ name: 'init' }];
    });
    expect(gen(pod, runtime([ctr('init', 'exited', { exitCode: 1, reason: 'Error' })])).phase).toBe('Failed');
  });

  it('init done → Initialized True, init ready, regular containers ContainerCreating-free', () => {
    const pod = basePod((p) => (p.spec.initContainers = [{ name: 'init' }]));
    const s = gen(pod, runtime([ctr('init', 'exited'), ctr('app', 'running'), ctr('side', 'running')]));
    expect(s.phase).toBe('Running');
    expect(cs(s, 'init')).toMatchObject({ ready: true, started: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    expect(cond(s, 'Initialized').status).toBe('True');
  });

  it('a terminal previous phase never goes back', () => {
    const s = gen(basePod(), runtime([ctr('app', 'running'), ctr('side', 'running')]), {
      previous: { phase: 'Failed', reason: 'Evicted', message: 'x' },
    });
    expect(s).toMatchObject({ phase: 'Failed', reason: 'Evicted', message: 'x' });
  });
});

describe('generateAPIPodStatus: container statuses', () => {
  it('running container: ids, image, times, ready/started, sorted by name', () => {
    const s = gen(basePod(), runtime([ctr('side', 'running', { id: 'bbb' }), ctr('app', 'running', { id: 'aaa', restartCount: 2 })]));
    expect(s.containerStatuses!.map((c) => c.name)).toEqual(['app', 'side']);
    expect(cs(s, 'app')).toEqual({
      name: 'app',
      ready: true,
      started: true,
      restartCount: 2,
      image: 'docker.io/library/busybox:latest',
      imageID: 'sha256:abc',
      containerID: 'containerd://aaa',
      state: { running: { startedAt: '2024-01-02T03:04:00Z' } },
    });
  });

  it('runtime name prefix is configurable', () => {
    const s = gen(basePod(), runtime([ctr('app', 'running', { id: 'x' })]), { runtimeName: 'sim' });
    expect(cs(s, 'app').containerID).toBe('sim://x');
  });

  it('not created → ContainerCreating; readiness map and probes decide ready', () => {
    const pod = basePod((p) => (p.spec.containers[0].readinessProbe = { exec: { command: ['true'] } }));
    const s = gen(pod, runtime([ctr('app', 'running')]));
    expect(cs(s, 'side').state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    expect(cs(s, 'app').ready).toBe(false);
    expect(gen(pod, runtime([ctr('app', 'running')]), { readiness: new Map([['app', true]]) }).containerStatuses![0].ready).toBe(true);
  });

  it.each(['ErrImagePull', 'ImagePullBackOff', 'CreateContainerError'])('waiting reason %s from the reason cache', (reason) => {
    const s = gen(basePod(), runtime([ctr('side', 'running')]), { reasonCache: new Map([['app', { reason, message: 'details' }]]) });
    expect(cs(s, 'app').state).toEqual({ waiting: { reason, message: 'details' } });
  });

  it('CrashLoopBackOff: waiting with the exited attempt as lastState', () => {
    const dead = ctr('app', 'exited', { exitCode: 1, reason: 'Error', restartCount: 3 });
    const s = gen(basePod(), runtime([dead, ctr('side', 'running')]), {
      reasonCache: new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' }]]),
    });
    expect(cs(s, 'app')).toMatchObject({
      restartCount: 3,
      ready: false,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: rfc3339(T0 - 1000) } },
    });
    // A waiting container with a previous termination counts as stopped, not waiting.
    expect(s.phase).toBe('Running');
  });

  it('reason cache is ignored for a container that will not restart', () => {
    const pod = basePod((p) => (p.spec.restartPolicy = 'Never'));
    const s = gen(pod, runtime([ctr('app', 'exited', { exitCode: 1 })]), {
      reasonCache: new Map([['app', { reason: 'CrashLoopBackOff' }]]),
    });
    expect(cs(s, 'app').state?.terminated?.reason).toBe('Error');
  });

  it('lastState is the previous attempt; OOMKilled reason is passed through', () => {
    const old = ctr('app', 'exited', { exitCode: 137, reason: 'OOMKilled', createdAt: NS(T0 - 9000) });
    const cur = ctr('app', 'running', { createdAt: NS(T0 - 2000), restartCount: 1 });
    const s = gen(basePod(), runtime([old, cur, ctr('side', 'running')]));
    expect(cs(s, 'app')).toMatchObject({
      restartCount: 1,
      state: { running: {} },
      lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', containerID: `containerd://${old.id}` } },
    });
  });

  it('a container that was running and vanished keeps the pod Running via a synthetic lastState', () => {
    const previous = gen(basePod(), runtime([ctr('app', 'running'), ctr('side', 'running')]));
    const s = gen(basePod(), runtime([ctr('side', 'running')]), { previous });
    expect(cs(s, 'app').lastState?.terminated).toMatchObject({ exitCode: 137, reason: 'ContainerStatusUnknown' });
    expect(cs(s, 'app').restartCount).toBe(1);
  });
});

describe('generateAPIPodStatus: conditions, IPs, times', () => {
  const running = () => runtime([ctr('app', 'running'), ctr('side', 'running')]);

  it('ready pod: all kubelet conditions True, in upstream order', () => {
    const s = gen(basePod(), running());
    expect(s.conditions!.map((c) => [c.type, c.status])).toEqual([
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'True'],
      ['ContainersReady', 'True'],
      ['PodScheduled', 'True'],
    ]);
    expect(s.conditions!.every((c) => c.lastTransitionTime === '2024-01-02T03:04:05Z')).toBe(true);
  });

  it('unready containers: Ready and ContainersReady False with the upstream message', () => {
    const s = gen(basePod(), runtime([ctr('app', 'running')]));
    expect(cond(s, 'ContainersReady')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [side]',
    });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
  });

  it('no sandbox → PodReadyToStartContainers False', () => {
    expect(cond(gen(basePod(), undefined), 'PodReadyToStartContainers').status).toBe('False');
  });

  it('lastTransitionTime kept when the status is unchanged, reset when it flips', () => {
    const first = gen(basePod(), running());
    const later = T0 + 60_000;
    const same = gen(basePod(), running(), { previous: first, now: later });
    expect(cond(same, 'Ready').lastTransitionTime).toBe(rfc3339(T0));
    const flipped = gen(basePod(), runtime([ctr('app', 'running')]), { previous: first, now: later });
    expect(cond(flipped, 'Ready').lastTransitionTime).toBe(rfc3339(later));
    expect(cond(flipped, 'PodScheduled').lastTransitionTime).toBe(rfc3339(T0));
  });

  it('readiness gates and foreign conditions', () => {
    const pod = basePod((p) => {
      p.spec['readinessGates'] = [{ conditionType: 'example.com/lb' }];
      p.status = {
        conditions: [
          { type: 'example.com/lb', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
      };
    });
    const s = gen(pod, running());
    expect(s.conditions!.filter((c) => c.type === 'Ready')).toHaveLength(1);
    expect(cond(s, 'example.com/lb').status).toBe('False');
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' });
  });

  it('podIPs from the runtime, hostIP from the node, qosClass, startTime preserved', () => {
    const s = gen(basePod(), running());
    expect(s).toMatchObject({
      podIP: '10.0.0.5',
      podIPs: [{ ip: '10.0.0.5' }, { ip: 'fd00::5' }],
      hostIP: '192.168.1.10',
      qosClass: 'BestEffort',
    });
    expect(s['hostIPs']).toEqual([{ ip: '192.168.1.10' }]);
    expect(s.startTime).toBe('2024-01-02T03:04:05Z');
    expect(gen(basePod(), running(), { previous: { startTime: '2020-01-01T00:00:00Z' } }).startTime).toBe('2020-01-01T00:00:00Z');
  });

  it('host-network pods take the node IPs', () => {
    const pod = basePod((p) => (p.spec.hostNetwork = true));
    const s = gen(
      pod,
      runtime([], (r) => (r.ips = [])),
      { nodeIPs: ['192.168.1.10', 'fd00::10'] },
    );
    expect(s.podIPs).toEqual([{ ip: '192.168.1.10' }, { ip: 'fd00::10' }]);
  });
});
