/** The fault suite's invariant checker (test/faults/invariants.ts) on hand-built runtime views: each violation is caught. */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { baselineOf, checkRuntime, checkStatuses, countViolations, ranPerPods, restartsInPods } from '../faults/invariants.js';
import type { ContainerRecord, RuntimeView, SandboxRecord } from '../faults/runtime-view.js';
import type { Workload } from '../faults/workload.js';

const NODE = 'n1';
const workload: Workload = {
  namespace: 'ns',
  pods: [
    { name: 'a', kind: 'long', containers: ['main'] },
    { name: 'b', kind: 'long', containers: ['main', 'side'] },
    { name: 'o', kind: 'once', containers: ['once'] },
  ],
};
const box = (id: string, pod: string, ready = true): SandboxRecord => ({ id, pod: `${pod}-${NODE}`, ready });
const ctr = (id: string, pod: string, name: string, state: ContainerRecord['state'] = 'running'): ContainerRecord => ({
  id,
  sandboxId: `s-${pod}`,
  pod: `${pod}-${NODE}`,
  name,
  running: state === 'running',
  state,
  neverStarted: state === 'created',
});
const healthy = (): RuntimeView => ({
  sandboxes: [box('sa', 'a'), box('sb', 'b'), box('so', 'o', false)],
  containers: [ctr('ca', 'a', 'main'), ctr('cb1', 'b', 'main'), ctr('cb2', 'b', 'side'), ctr('co', 'o', 'once', 'exited')],
});
const zero = { lost: 0, duplicates: 0, healthyRestarted: 0, terminatedRestarted: 0, deletedRunning: 0 };

describe('checkRuntime', () => {
  it('a run-once pod whose only start was cut off is lost for good, and /pods must show it Failed', () => {
    const v = healthy();
    v.containers = v.containers.map((c) => (c.id === 'co' ? { ...c, neverStarted: true } : c));
    const got = checkRuntime(workload, NODE, v);
    expect([got.lost, got.onceStartCutOff]).toEqual([[], ['o-n1']]);
    expect(countViolations(got).lost).toBe(1);
    const p = [
      pod('a', 'Running', [{ name: 'main', id: 'ca' }]),
      pod('b', 'Running', [
        { name: 'main', id: 'cb1' },
        { name: 'side', id: 'cb2' },
      ]),
    ];
    expect(checkStatuses(workload, NODE, v, [...p, pod('o', 'Succeeded')])).toEqual(['o-n1: phase Succeeded, want Failed']);
    expect(checkStatuses(workload, NODE, v, [...p, pod('o', 'Failed')])).toEqual([]);
  });

  it('a healthy view has no violation, against its own baseline too', () => {
    const v = healthy();
    expect(countViolations(checkRuntime(workload, NODE, v, baselineOf(v)))).toEqual(zero);
  });

  it('a second ready sandbox or running container of a pod is a duplicate', () => {
    const v = healthy();
    v.sandboxes.push(box('sa2', 'a'));
    v.containers.push(ctr('cb3', 'b', 'side'));
    const got = checkRuntime(workload, NODE, v);
    expect(got.duplicateSandboxes).toEqual(['a-n1: 2 ready sandboxes']);
    expect(got.duplicateContainers).toEqual(['b-n1/side: 2 running']);
    expect(countViolations(got).duplicates).toBe(2);
  });

  it('a sandbox of no desired pod is a duplicate', () => {
    const v = healthy();
    v.sandboxes.push(box('sx', 'x'));
    expect(checkRuntime(workload, NODE, v).duplicateSandboxes).toEqual(['x-n1: a sandbox of no desired pod']);
  });

  it('a long pod without a running container, or a run-once pod that never ran, is lost', () => {
    const v = healthy();
    v.containers = v.containers.filter((c) => c.id !== 'cb2' && c.id !== 'co');
    expect(checkRuntime(workload, NODE, v).lost).toEqual(['b-n1', 'o-n1']);
  });

  it('a run-once pod garbage-collected after it ran (nothing in the runtime, /pods Succeeded with exit 0) is not lost', () => {
    const v = healthy();
    v.containers = v.containers.filter((c) => c.id !== 'co');
    v.sandboxes = v.sandboxes.filter((s) => s.id !== 'so');
    const done = (exitCode: number): Pod =>
      ({
        metadata: { name: 'o-n1' },
        spec: { containers: [] },
        status: { phase: 'Succeeded', containerStatuses: [{ name: 'once', state: { terminated: { exitCode } } }] },
      }) as unknown as Pod;
    expect(checkRuntime(workload, NODE, v, undefined, ranPerPods([done(0)])).lost).toEqual([]);
    // Without that status, or with its sandbox still there, it is lost.
    expect(checkRuntime(workload, NODE, v, undefined, ranPerPods([done(1)])).lost).toEqual(['o-n1']);
    expect(checkRuntime(workload, NODE, v).lost).toEqual(['o-n1']);
    v.sandboxes.push(box('so', 'o', false));
    expect(checkRuntime(workload, NODE, v, undefined, ranPerPods([done(0)])).lost).toEqual(['o-n1']);
  });

  it('an exited container of a long pod, or a baseline container no longer running, is a healthy container restarted', () => {
    const before = healthy();
    const after = healthy();
    after.containers = after.containers.map((c) => (c.id === 'ca' ? { ...c, state: 'exited', running: false } : c));
    after.containers.push(ctr('ca2', 'a', 'main'));
    const got = checkRuntime(workload, NODE, after, baselineOf(before));
    expect(got.healthyRestarted).toEqual(['a-n1/main: 1 exited container(s)', 'a-n1/main (ca) ran when the fault hit and does not now']);
    expect(got.lost).toEqual([]);
  });

  it('a run-once container that ran twice is a terminated pod restarted; its exit is not a restart', () => {
    const before = healthy();
    before.containers = before.containers.map((c) => (c.id === 'co' ? { ...c, state: 'running', running: true } : c));
    const after = healthy();
    after.containers.push(ctr('co2', 'o', 'once', 'exited'));
    const got = checkRuntime(workload, NODE, after, baselineOf(before));
    expect(got.terminatedRestarted).toEqual(['o-n1: its container ran 2 times']);
    expect(got.healthyRestarted).toEqual([]);
  });

  it('a container that never started (left created, or exited with StartError) is reported, not a violation', () => {
    const v = healthy();
    v.containers.push(ctr('cx', 'a', 'main', 'created'), { ...ctr('cy', 'b', 'main', 'exited'), neverStarted: true });
    v.containers.push({ ...ctr('cz', 'o', 'once', 'exited'), neverStarted: true });
    const got = checkRuntime(workload, NODE, v);
    expect(got.startsInterrupted).toEqual(['a-n1/main: 1 never started (created)', 'b-n1/main: 1 never started (exited)']);
    expect(countViolations(got)).toEqual(zero);
  });
});

const pod = (name: string, phase: string, statuses: { name: string; id?: string; restartCount?: number }[] = []): Pod =>
  ({
    metadata: { name: `${name}-${NODE}` },
    status: {
      phase,
      containerStatuses: statuses.map((s) => ({
        name: s.name,
        containerID: s.id ? `containerd://${s.id}` : undefined,
        state: s.id ? { running: {} } : { waiting: {} },
        restartCount: s.restartCount ?? 0,
      })),
    },
  }) as unknown as Pod;

describe('checkStatuses and restartsInPods', () => {
  const pods = () => [
    pod('a', 'Running', [{ name: 'main', id: 'ca' }]),
    pod('b', 'Running', [
      { name: 'main', id: 'cb1' },
      { name: 'side', id: 'cb2' },
    ]),
    pod('o', 'Succeeded'),
  ];

  it('agrees when /pods shows what the runtime runs', () => {
    expect(checkStatuses(workload, NODE, healthy(), pods())).toEqual([]);
  });

  it('names a missing pod, a wrong phase and a stale container id', () => {
    const p = pods();
    p[0] = pod('a', 'Running', [{ name: 'main', id: 'old' }]);
    p[2] = pod('o', 'Running');
    expect(checkStatuses(workload, NODE, healthy(), p.slice(0, 1).concat(p[2]))).toEqual([
      'a-n1/main: /pods containerd://old, runtime ca',
      'b-n1: not in /pods',
      'o-n1: phase Running, want Succeeded',
    ]);
  });

  it('a restartCount with no exited container is a restart, unless a never-started container explains it', () => {
    const v = healthy();
    v.containers.push(ctr('cx', 'b', 'side', 'created'));
    const p = [
      pod('a', 'Running', [{ name: 'main', id: 'ca', restartCount: 1 }]),
      pod('b', 'Running', [
        { name: 'main', id: 'cb1' },
        { name: 'side', id: 'cb2', restartCount: 1 },
      ]),
    ];
    expect(restartsInPods(workload, NODE, v, p)).toEqual({
      restarted: ['a-n1/main: restartCount 1'],
      bumped: ['b-n1/side: restartCount 1'],
    });
  });
});

describe('pods from the apiserver, and pods the fault deleted', () => {
  // Pods from the apiserver keep their own names in the runtime (no `-<node>` suffix).
  const api: Workload = {
    namespace: 'ns',
    source: 'api',
    pods: [
      { name: 'a', kind: 'long', containers: ['main'] },
      { name: 'g', kind: 'gone', containers: ['main'] },
    ],
  };
  const view = (goneRunning: boolean): RuntimeView => ({
    sandboxes: [
      { id: 'sa', pod: 'a', ready: true },
      { id: 'sg', pod: 'g', ready: goneRunning },
    ],
    containers: [
      { ...ctr('ca', 'a', 'main'), pod: 'a' },
      { ...ctr('cg', 'g', 'main', goneRunning ? 'running' : 'exited'), pod: 'g' },
    ],
  });
  const apiPod = (name: string, ready: string, id = 'ca'): Pod =>
    ({
      metadata: { name },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: ready }],
        containerStatuses: [{ name: 'main', containerID: `containerd://${id}`, state: { running: {} }, restartCount: 0 }],
      },
    }) as unknown as Pod;

  it('a deleted pod that still runs is counted until it is stopped; its stopped containers are no restart', () => {
    const before = view(true);
    const running = checkRuntime(api, NODE, before, baselineOf(before));
    expect(running.deletedRunning).toEqual(['g: deleted, 1 ready sandbox(es), 1 running container(s)']);
    expect(countViolations(running).deletedRunning).toBe(1);
    const stopped = checkRuntime(api, NODE, view(false), baselineOf(before));
    expect(countViolations(stopped)).toEqual(zero);
  });

  it('the apiserver must show each long pod Ready, and no longer hold a deleted one', () => {
    expect(checkStatuses(api, NODE, view(false), [apiPod('a', 'True')])).toEqual([]);
    expect(checkStatuses(api, NODE, view(false), [apiPod('a', 'False'), apiPod('g', 'True', 'cg')])).toEqual([
      'a: Ready False, want True',
      'g: deleted, still in the apiserver (phase Running)',
    ]);
  });
});
