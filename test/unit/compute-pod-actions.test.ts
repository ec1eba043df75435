import { describe, expect, it } from 'vitest';
import { PodSchema, type Pod } from '../../src/api/pod.js';
import type { ContainerStatus, PodStatus } from '../../src/runtime/types.js';
import { hashContainer } from '../../src/pod/container-hash.js';
import {
  computePodActions,
  describePodActions,
  type ComputePodActionsOptions,
  type PodActions,
} from '../../src/workers/sync/compute-pod-actions.js';

// One baseline pod and the runtime status in which it is fully running, plus
// mutators, in the shape of upstream TestComputePodActions.

const SANDBOX = 'sandbox-0000000000000001';

function basePod(): Pod {
  return PodSchema.parse({
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
    spec: {
      restartPolicy: 'Always',
      containers: [
        { name: 'foo1', image: 'busybox:1' },
        { name: 'foo2', image: 'busybox:2' },
        { name: 'foo3', image: 'busybox:3' },
      ],
    },
  });
}

function withInits(pod: Pod): void {
  pod.spec.initContainers = [
    { name: 'init1', image: 'busybox:i1' },
    { name: 'init2', image: 'busybox:i2' },
  ];
}

let seq = 0;
function cs(pod: Pod, name: string, state: ContainerStatus['state'], exitCode = 0, createdAt = 100n): ContainerStatus {
  const spec = [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])].find((c) => c.name === name)!;
  return {
    id: `${name}-id${seq++}`,
    name,
    state,
    createdAt,
    startedAt: createdAt,
    finishedAt: state === 'exited' ? createdAt + 1n : 0n,
    exitCode,
    reason: '',
    message: '',
    image: spec.image ?? '',
    imageRef: spec.image ?? '',
    restartCount: 0,
    hash: hashContainer(spec),
    sandboxId: SANDBOX,
  };
}

function baseStatus(pod: Pod): PodStatus {
  return {
    uid: 'uid-1',
    name: 'web',
    namespace: 'default',
    ips: ['10.0.0.2'],
    sandboxStatuses: [{ id: SANDBOX, state: 'ready', createdAt: 50n, attempt: 0, ips: ['10.0.0.2'], hostNetwork: false }],
    containerStatuses: (pod.spec.containers ?? []).map((c) => cs(pod, c.name, 'running')),
    timestamp: 0,
  };
}

/** init[0] a sidecar (restartPolicy Always), init[1] an ordinary init container, init[2] a second sidecar. */
function withSidecars(pod: Pod): void {
  pod.spec.initContainers = [
    { name: 'side1', image: 'busybox:s1', restartPolicy: 'Always' },
    { name: 'init2', image: 'busybox:i2' },
    { name: 'side3', image: 'busybox:s3', restartPolicy: 'Always' },
  ];
}

/** Sidecars running, the ordinary init container done. */
function sidecarsUp(pod: Pod, s: PodStatus): void {
  s.containerStatuses.push(cs(pod, 'side1', 'running', 0, 10n), cs(pod, 'init2', 'exited', 0, 20n), cs(pod, 'side3', 'running', 0, 30n));
}

function initsDone(pod: Pod, s: PodStatus): void {
  s.containerStatuses.push(cs(pod, 'init1', 'exited', 0, 10n), cs(pod, 'init2', 'exited', 0, 20n));
}

function setState(s: PodStatus, name: string, state: ContainerStatus['state'], exitCode = 0): void {
  const c = s.containerStatuses.find((x) => x.name === name)!;
  c.state = state;
  c.exitCode = exitCode;
}

const noAction = (over: Partial<PodActions> = {}): PodActions => ({
  killPod: false,
  createSandbox: false,
  sandboxId: SANDBOX,
  attempt: 0,
  initContainersToStart: [],
  containersToStart: [],
  containersToKill: [],
  ...over,
});

interface Case {
  name: string;
  mutatePod?: (p: Pod) => void;
  mutateStatus?: (s: PodStatus, p: Pod) => void;
  opts?: (s: PodStatus) => ComputePodActionsOptions;
  expected: (s: PodStatus) => PodActions;
}

const id = (s: PodStatus, name: string): string => s.containerStatuses.find((c) => c.name === name)!.id;

const cases: Case[] = [
  { name: 'steady state: everything running, nothing to do', expected: () => noAction() },
  {
    name: 'new pod: create sandbox (attempt 0) and start every container',
    mutateStatus: (s) => {
      s.sandboxStatuses = [];
      s.containerStatuses = [];
    },
    expected: () => noAction({ killPod: true, createSandbox: true, sandboxId: '', containersToStart: [0, 1, 2] }),
  },
  {
    name: 'Always: exited containers restart whatever the exit code',
    mutateStatus: (s) => {
      setState(s, 'foo1', 'exited', 0);
      setState(s, 'foo3', 'exited', 1);
    },
    expected: () => noAction({ containersToStart: [0, 2] }),
  },
  {
    name: 'OnFailure: only the container that failed restarts',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'OnFailure';
    },
    mutateStatus: (s) => {
      setState(s, 'foo1', 'exited', 0);
      setState(s, 'foo3', 'exited', 1);
    },
    expected: () => noAction({ containersToStart: [2] }),
  },
  {
    name: 'Never: exited containers stay down while another still runs',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s) => {
      setState(s, 'foo1', 'exited', 0);
      setState(s, 'foo3', 'exited', 1);
    },
    expected: () => noAction(),
  },
  {
    name: 'Never: all containers done → kill the pod (stop the sandbox)',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s) => {
      for (const c of s.containerStatuses) {
        c.state = 'exited';
      }
    },
    expected: () => noAction({ killPod: true }),
  },
  {
    name: 'sandbox not ready: kill pod, new sandbox with attempt + 1, start all',
    mutateStatus: (s) => {
      s.sandboxStatuses[0].state = 'notready';
      s.sandboxStatuses[0].attempt = 2;
    },
    expected: () => noAction({ killPod: true, createSandbox: true, attempt: 3, containersToStart: [0, 1, 2] }),
  },
  {
    name: 'sandbox not ready, OnFailure: succeeded containers are not started again',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'OnFailure';
    },
    mutateStatus: (s) => {
      s.sandboxStatuses[0].state = 'notready';
      setState(s, 'foo1', 'exited', 0);
      setState(s, 'foo2', 'exited', 0);
      setState(s, 'foo3', 'exited', 2);
    },
    expected: () => noAction({ killPod: true, createSandbox: true, attempt: 1, containersToStart: [2] }),
  },
  {
    name: 'sandbox dead, OnFailure, all succeeded: do not recreate the sandbox',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'OnFailure';
    },
    mutateStatus: (s) => {
      s.sandboxStatuses[0].state = 'notready';
      for (const c of s.containerStatuses) c.state = 'exited';
    },
    expected: () => noAction({ killPod: true, attempt: 1 }),
  },
  {
    name: 'sandbox dead, Never, containers ran: do not recreate the sandbox',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s) => {
      s.sandboxStatuses[0].state = 'notready';
      setState(s, 'foo1', 'exited', 1);
    },
    expected: () => noAction({ killPod: true, attempt: 1 }),
  },
  {
    name: 'sandbox dead, Never, no container ever created: retry the sandbox',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s) => {
      s.sandboxStatuses[0].state = 'notready';
      s.containerStatuses = [];
    },
    expected: () => noAction({ killPod: true, createSandbox: true, attempt: 1, containersToStart: [0, 1, 2] }),
  },
  {
    name: 'two ready sandboxes: reconcile by recreating',
    mutateStatus: (s) => {
      s.sandboxStatuses.push({ ...s.sandboxStatuses[0], id: 'sandbox-old', createdAt: 10n });
    },
    expected: () => noAction({ killPod: true, createSandbox: true, attempt: 1, containersToStart: [0, 1, 2] }),
  },
  {
    name: 'hostNetwork toggled on: recreate, old sandbox id not reused',
    mutatePod: (p) => {
      p.spec.hostNetwork = true;
    },
    expected: () => noAction({ killPod: true, createSandbox: true, sandboxId: '', attempt: 1, containersToStart: [0, 1, 2] }),
  },
  {
    name: 'pod-network sandbox without an IP: recreate',
    mutateStatus: (s) => {
      s.sandboxStatuses[0].ips = [];
    },
    expected: () => noAction({ killPod: true, createSandbox: true, attempt: 1, containersToStart: [0, 1, 2] }),
  },
  {
    name: 'host-network sandbox without an IP is fine',
    mutatePod: (p) => {
      p.spec.hostNetwork = true;
    },
    mutateStatus: (s) => {
      s.sandboxStatuses[0].ips = [];
      s.sandboxStatuses[0].hostNetwork = true;
    },
    expected: () => noAction(),
  },
  {
    name: 'image changed on a running container: kill with "definition changed" and start',
    mutatePod: (p) => {
      p.spec.containers[1].image = 'busybox:new';
    },
    expected: (s) =>
      noAction({
        containersToStart: [1],
        containersToKill: [
          { id: id(s, 'foo2'), name: 'foo2', reason: '', message: 'Container foo2 definition changed, will be restarted' },
        ],
      }),
  },
  {
    name: 'spec change restarts even under restartPolicy Never',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
      p.spec.containers[0].image = 'busybox:new';
    },
    expected: (s) =>
      noAction({
        containersToStart: [0],
        containersToKill: [
          { id: id(s, 'foo1'), name: 'foo1', reason: '', message: 'Container foo1 definition changed, will be restarted' },
        ],
      }),
  },
  {
    name: 'missing hash annotation counts as changed',
    mutateStatus: (s) => {
      s.containerStatuses[2].hash = '';
    },
    expected: (s) =>
      noAction({
        containersToStart: [2],
        containersToKill: [
          { id: id(s, 'foo3'), name: 'foo3', reason: '', message: 'Container foo3 definition changed, will be restarted' },
        ],
      }),
  },
  {
    name: 'liveness failure (by container id): kill and restart',
    opts: (s) => ({ livenessFailed: new Set([id(s, 'foo1')]) }),
    expected: (s) =>
      noAction({
        containersToStart: [0],
        containersToKill: [
          { id: id(s, 'foo1'), name: 'foo1', reason: 'LivenessProbe', message: 'Container foo1 failed liveness probe, will be restarted' },
        ],
      }),
  },
  {
    name: 'liveness failure (by name) under Never: kill without restart',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
    },
    opts: () => ({ livenessFailed: ['foo3'] }),
    expected: (s) =>
      noAction({
        containersToKill: [{ id: id(s, 'foo3'), name: 'foo3', reason: 'LivenessProbe', message: 'Container foo3 failed liveness probe' }],
      }),
  },
  {
    name: 'liveness failure of the only running container under Never: kill it and the pod',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
      p.spec.containers = [p.spec.containers[0]];
    },
    mutateStatus: (s) => {
      s.containerStatuses = [s.containerStatuses[0]];
    },
    opts: () => ({ livenessFailed: ['foo1'] }),
    expected: (s) =>
      noAction({
        killPod: true,
        containersToKill: [{ id: id(s, 'foo1'), name: 'foo1', reason: 'LivenessProbe', message: 'Container foo1 failed liveness probe' }],
      }),
  },
  {
    name: 'startup probe failure: kill and restart',
    opts: () => ({ startupFailed: ['foo2'] }),
    expected: (s) =>
      noAction({
        containersToStart: [1],
        containersToKill: [
          { id: id(s, 'foo2'), name: 'foo2', reason: 'StartupProbe', message: 'Container foo2 failed startup probe, will be restarted' },
        ],
      }),
  },
  {
    name: 'unknown state: kill first, then start',
    mutateStatus: (s) => {
      setState(s, 'foo2', 'unknown');
    },
    expected: (s) =>
      noAction({
        containersToStart: [1],
        containersToKill: [
          { id: id(s, 'foo2'), name: 'foo2', reason: 'Unknown', message: 'Container is in "unknown" state, try killing it before restart' },
        ],
      }),
  },
  {
    name: 'created but never started: start again (even under Never)',
    mutatePod: (p) => {
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s) => {
      setState(s, 'foo3', 'created');
    },
    expected: () => noAction({ containersToStart: [2] }),
  },
  {
    name: 'newest instance decides: an old exited instance does not shadow a running one',
    mutateStatus: (s, p) => {
      s.containerStatuses.push(cs(p, 'foo1', 'exited', 1, 1n));
    },
    expected: () => noAction(),
  },
  {
    name: 'pod being deleted: exited containers are not restarted',
    mutatePod: (p) => {
      p.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
    },
    mutateStatus: (s) => {
      setState(s, 'foo1', 'exited', 1);
    },
    expected: () => noAction(),
  },
  // --- init containers ---
  {
    name: 'init: new pod starts only the first init container',
    mutatePod: withInits,
    mutateStatus: (s) => {
      s.sandboxStatuses = [];
      s.containerStatuses = [];
    },
    expected: () => noAction({ killPod: true, createSandbox: true, sandboxId: '', initContainersToStart: [0] }),
  },
  {
    name: 'init: sandbox exists, nothing ran yet → first init container',
    mutatePod: withInits,
    mutateStatus: (s) => {
      s.containerStatuses = [];
    },
    expected: () => noAction({ initContainersToStart: [0] }),
  },
  {
    name: 'init: first one running → wait',
    mutatePod: withInits,
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'init1', 'running')];
    },
    expected: () => noAction(),
  },
  {
    name: 'init: first exited 0 → second, one at a time',
    mutatePod: withInits,
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'init1', 'exited', 0)];
    },
    expected: () => noAction({ initContainersToStart: [1] }),
  },
  {
    name: 'init: all succeeded → start regular containers',
    mutatePod: withInits,
    mutateStatus: (s, p) => {
      s.containerStatuses = [];
      initsDone(p, s);
    },
    expected: () => noAction({ containersToStart: [0, 1, 2] }),
  },
  {
    name: 'init: failed under Always → restart that init container',
    mutatePod: withInits,
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'init1', 'exited', 0), cs(p, 'init2', 'exited', 3)];
    },
    expected: () => noAction({ initContainersToStart: [1] }),
  },
  {
    name: 'init: OOM-killed counts as failed even with exit code 0',
    mutatePod: (p) => {
      withInits(p);
      p.spec.restartPolicy = 'OnFailure';
    },
    mutateStatus: (s, p) => {
      const c = cs(p, 'init1', 'exited', 0);
      c.reason = 'OOMKilled';
      s.containerStatuses = [c];
    },
    expected: () => noAction({ initContainersToStart: [0] }),
  },
  {
    name: 'init: failed under Never → the pod fails (kill)',
    mutatePod: (p) => {
      withInits(p);
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'init1', 'exited', 1)];
    },
    expected: () => noAction({ killPod: true }),
  },
  {
    name: 'init: unknown state → kill it, then start it again',
    mutatePod: withInits,
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'init1', 'unknown')];
    },
    expected: (s) =>
      noAction({
        initContainersToStart: [0],
        containersToKill: [
          {
            id: id(s, 'init1'),
            name: 'init1',
            reason: 'Unknown',
            message: 'Init container is in "unknown" state, try killing it before restart',
          },
        ],
      }),
  },
  {
    name: 'init: garbage-collected but a regular container runs → initialization is done',
    mutatePod: withInits,
    expected: () => noAction(),
  },
  {
    name: 'init: new sandbox restarts initialization from the first init container',
    mutatePod: withInits,
    mutateStatus: (s, p) => {
      initsDone(p, s);
      s.sandboxStatuses[0].state = 'notready';
    },
    expected: () => noAction({ killPod: true, createSandbox: true, attempt: 1, initContainersToStart: [0] }),
  },
  {
    name: 'init: OnFailure, initialized and all succeeded, sandbox dead → no new sandbox',
    mutatePod: (p) => {
      withInits(p);
      p.spec.restartPolicy = 'OnFailure';
    },
    mutateStatus: (s, p) => {
      for (const c of s.containerStatuses) c.state = 'exited';
      initsDone(p, s);
      s.sandboxStatuses[0].state = 'notready';
    },
    expected: () => noAction({ killPod: true, attempt: 1 }),
  },
  {
    name: 'sidecar: a running sidecar does not block the next init container',
    mutatePod: withSidecars,
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'side1', 'running')];
    },
    expected: () => noAction({ initContainersToStart: [1] }),
  },
  {
    name: 'sidecar: the last init container is a running sidecar → start the app containers (no deadlock)',
    mutatePod: withSidecars,
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'side1', 'running', 0, 10n), cs(p, 'init2', 'exited', 0, 20n), cs(p, 'side3', 'running', 0, 30n)];
    },
    expected: () => noAction({ containersToStart: [0, 1, 2] }),
  },
  {
    name: 'sidecar: steady state with sidecars and apps running: nothing to do',
    mutatePod: withSidecars,
    mutateStatus: (s, p) => sidecarsUp(p, s),
    expected: () => noAction(),
  },
  {
    name: 'sidecar: an exited sidecar restarts even under restartPolicy Never',
    mutatePod: (p) => {
      withSidecars(p);
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s, p) => {
      sidecarsUp(p, s);
      setState(s, 'side1', 'exited', 0);
    },
    expected: () => noAction({ initContainersToStart: [0] }),
  },
  {
    name: 'sidecar: garbage-collected sidecar of an initialized pod is started again; the ordinary init container is not',
    mutatePod: withSidecars,
    mutateStatus: (s, p) => {
      s.containerStatuses.push(cs(p, 'side3', 'running', 0, 30n));
    },
    expected: () => noAction({ initContainersToStart: [0] }),
  },
  {
    name: 'sidecar: with a startupProbe and no result yet → wait before the next init container',
    mutatePod: (p) => {
      withSidecars(p);
      p.spec.initContainers![0].startupProbe = { exec: { command: ['true'] } };
    },
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'side1', 'running')];
    },
    expected: () => noAction(),
  },
  {
    name: 'sidecar: with a startupProbe that succeeded → the next init container starts',
    mutatePod: (p) => {
      withSidecars(p);
      p.spec.initContainers![0].startupProbe = { exec: { command: ['true'] } };
    },
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'side1', 'running')];
    },
    opts: (s) => ({ startupSucceeded: [id(s, 'side1')] }),
    expected: () => noAction({ initContainersToStart: [1] }),
  },
  {
    name: 'sidecar: startup probe failed → kill it and start it again',
    mutatePod: (p) => {
      withSidecars(p);
      p.spec.initContainers![0].startupProbe = { exec: { command: ['true'] } };
    },
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'side1', 'running')];
    },
    opts: (s) => ({ startupFailed: [id(s, 'side1')] }),
    expected: (s) =>
      noAction({
        initContainersToStart: [0],
        containersToKill: [
          { id: id(s, 'side1'), name: 'side1', reason: 'StartupProbe', message: 'Init container side1 failed startup probe' },
        ],
      }),
  },
  {
    name: 'sidecar: definition changed → kill and start again',
    mutatePod: withSidecars,
    mutateStatus: (s, p) => {
      sidecarsUp(p, s);
      s.containerStatuses.find((c) => c.name === 'side3')!.hash = 'stale';
    },
    expected: (s) =>
      noAction({
        initContainersToStart: [2],
        containersToKill: [{ id: id(s, 'side3'), name: 'side3', reason: '', message: 'Init container side3 definition changed' }],
      }),
  },
  {
    name: 'sidecar: does not keep a finished pod alive (Never, apps done, sidecars running → kill the pod)',
    mutatePod: (p) => {
      withSidecars(p);
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s, p) => {
      sidecarsUp(p, s);
      for (const n of ['foo1', 'foo2', 'foo3']) setState(s, n, 'exited', 0);
      setState(s, 'side1', 'exited', 137);
    },
    expected: () => noAction({ killPod: true }),
  },
  {
    name: 'sidecar: a failing ordinary init container after a sidecar fails the pod under Never',
    mutatePod: (p) => {
      withSidecars(p);
      p.spec.restartPolicy = 'Never';
    },
    mutateStatus: (s, p) => {
      s.containerStatuses = [cs(p, 'side1', 'running', 0, 10n), cs(p, 'init2', 'exited', 2, 20n)];
    },
    expected: () => noAction({ killPod: true }),
  },
];

describe('computePodActions', () => {
  it.each(cases)('$name', (c) => {
    const pod = basePod();
    c.mutatePod?.(pod);
    const status = baseStatus(basePod());
    c.mutateStatus?.(status, pod);
    const actions = computePodActions(pod, status, c.opts?.(status) ?? {});
    expect(actions).toEqual(c.expected(status));
    // Plain data: survives structured clone unchanged.
    expect(structuredClone(actions)).toEqual(actions);
  });

  it('is pure: inputs are not mutated', () => {
    const pod = basePod();
    const status = baseStatus(pod);
    setState(status, 'foo1', 'exited', 1);
    const before = structuredClone({ pod, status });
    computePodActions(pod, status);
    expect({ pod, status }).toEqual(before);
  });
});

describe('describePodActions', () => {
  it('summarises the plan on one line', () => {
    const pod = basePod();
    pod.spec.containers[1].image = 'busybox:new';
    const status = baseStatus(basePod());
    const line = describePodActions(computePodActions(pod, status));
    expect(line).toBe(
      `killPod=false createSandbox=false attempt=0 sandbox=${SANDBOX.slice(0, 12)} init=[] start=[1] kill=[foo2(${id(status, 'foo2')})]`,
    );
  });
  it('shows "-" for no sandbox', () => {
    expect(describePodActions(noAction({ sandboxId: '' }))).toContain('sandbox=-');
  });
});
