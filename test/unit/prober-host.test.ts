import { describe, expect, it } from 'vitest';
import type { Probe } from '../../src/api/pod.js';
import type { Clock } from '../../src/common/clock.js';
import type { ContainerStatus, PodStatus } from '../../src/runtime/types.js';
import { ProberHost, type ProberBatch } from '../../src/prober/prober-host.js';
import type { ProbeContainer, ProbePod, ProbeType } from '../../src/prober/probe-types.js';
import type { ProbeAttempt, ProbeTarget } from '../../src/prober/run-probe.js';
import { FakeClock } from '../fakes/fake-clock.js';

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};
/** Steps the fake clock (firing due timers) and lets the probes that started finish. */
async function advance(s: { clock: FakeClock }, ms: number): Promise<void> {
  s.clock.step(ms);
  await settle();
  s.clock.step(0);
  await settle();
}

function ctr(id: string, state: ContainerStatus['state'], startedAtMs: number, name = 'app'): ContainerStatus {
  return {
    id,
    name,
    state,
    createdAt: BigInt(startedAtMs) * 1_000_000n,
    startedAt: BigInt(startedAtMs) * 1_000_000n,
    finishedAt: 0n,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'busybox',
    imageRef: 'busybox',
    restartCount: 0,
    hash: '',
    sandboxId: 'sb',
  };
}

interface Setup {
  clock: FakeClock;
  host: ProberHost;
  batches: ProberBatch[];
  /** The current runtime status per pod; tests mutate it. */
  statuses: Map<string, PodStatus>;
  /** Outcome the next probes return, per probe type. */
  answer: Partial<Record<ProbeType, ProbeAttempt['result'] | 'error'>>;
  probes: { type: ProbeType; target: ProbeTarget; at: number }[];
  results(): string[];
}

/**
 * A host that started long ago (no random start offset) unless `freshHost`.
 * `earlyTimersMs`: the host's timers fire that much before their due time (Node's do, by the clock);
 * `probeMs`: each probe takes that long.
 */
function setup(opts: { freshHost?: boolean; random?: number; earlyTimersMs?: number; probeMs?: number } = {}): Setup {
  const clock = new FakeClock();
  const early = opts.earlyTimersMs ?? 0;
  const hostClock: Clock = {
    now: () => clock.now(),
    setTimer: (ms, fn) => clock.setTimer(Math.max(0, ms - early), fn),
    sleep: (ms, signal) => clock.sleep(ms, signal),
  };
  const batches: ProberBatch[] = [];
  const statuses = new Map<string, PodStatus>();
  const answer: Setup['answer'] = {};
  const probes: Setup['probes'] = [];
  const host = new ProberHost({
    clock: hostClock,
    random: () => opts.random ?? 0.5,
    nodeIP: '192.0.2.1',
    statusOf: (uid) => statuses.get(uid),
    probe: async (type, _spec, target) => {
      probes.push({ type, target, at: clock.now() });
      if (opts.probeMs) await clock.sleep(opts.probeMs);
      const a = answer[type] ?? 'Success';
      if (a === 'error')
        return { outcome: 'unknown', output: '', error: 'boom', event: { reason: 'Unhealthy', message: `${type} probe errored` } };
      return a === 'Success'
        ? { result: 'Success', outcome: 'success', output: '' }
        : { result: 'Failure', outcome: 'failure', output: 'nope', event: { reason: 'Unhealthy', message: `${type} probe failed: nope` } };
    },
    emit: (b) => batches.push(b),
  });
  if (!opts.freshHost) clock.step(3_600_000);
  const results = () =>
    batches.flatMap((b) => b.results.map((r) => `${r.container}@${r.containerId} ${r.probeType}=${r.result ?? 'removed'}`));
  return { clock, host, batches, statuses, answer, probes, results };
}

const probe = (over: Partial<Probe> = {}): Probe => ({ exec: { command: ['true'] }, periodSeconds: 10, ...over });
function pod(containers: Partial<ProbeContainer>[], over: Partial<ProbePod> = {}): ProbePod {
  return {
    uid: 'u1',
    name: 'web',
    namespace: 'default',
    restartPolicy: 'Always',
    containers: containers.map((c) => ({ name: 'app', sidecar: false, ...c })),
    ...over,
  };
}
const status = (...containers: ContainerStatus[]): PodStatus => ({
  uid: 'u1',
  name: 'web',
  namespace: 'default',
  ips: ['10.1.0.5'],
  sandboxStatuses: [],
  containerStatuses: containers,
  timestamp: 0,
});

describe('ProberHost: readiness', () => {
  it('starts at Failure for a new instance, turns Success after successThreshold runs, Failure after failureThreshold', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.host.addPod(pod([{ readinessProbe: probe({ successThreshold: 2, failureThreshold: 2 }) }]));
    await advance(s, 0);
    expect(s.results()).toEqual(['app@c1 Readiness=Failure']); // initial value, then 1 success (< 2)
    await advance(s, 10_000);
    expect(s.results()).toEqual(['app@c1 Readiness=Failure', 'app@c1 Readiness=Success']);
    s.answer.Readiness = 'Failure';
    await advance(s, 10_000);
    expect(s.results()).toHaveLength(2); // one failure is below the threshold
    await advance(s, 10_000);
    expect(s.results().at(-1)).toBe('app@c1 Readiness=Failure');
    expect(s.probes.map((p) => p.target.podIP)).toEqual(['10.1.0.5', '10.1.0.5', '10.1.0.5', '10.1.0.5']);
  });

  it('waits for the pod status and the container; probes host-network pods at the node IP', async () => {
    const s = setup();
    s.host.addPod(pod([{ readinessProbe: probe() }], { hostNetwork: true }));
    await advance(s, 0);
    expect(s.probes).toHaveLength(0);
    s.statuses.set('u1', status());
    await advance(s, 10_000);
    expect(s.probes).toHaveLength(0);
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    await advance(s, 10_000);
    expect(s.probes.map((p) => p.target.podIP)).toEqual(['192.0.2.1']);
  });

  it('a manual trigger probes at once', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.host.addPod(pod([{ readinessProbe: probe() }]));
    await advance(s, 0);
    s.clock.step(3000);
    s.host.trigger('u1', 'app', 'Readiness');
    await advance(s, 0);
    expect(s.probes.map((p) => p.at - s.probes[0].at)).toEqual([0, 3000]);
    // The ticker keeps its period from the worker start.
    await advance(s, 7000);
    expect(s.probes.map((p) => p.at - s.probes[0].at)).toEqual([0, 3000, 10_000]);
  });

  it('one probe per period when the timer fires a little early and the probe runs across the due time', async () => {
    const s = setup({ earlyTimersMs: 1, probeMs: 3 });
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.host.addPod(pod([{ readinessProbe: probe({ periodSeconds: 1 }) }]));
    for (let ms = 0; ms < 10_000; ms++) await advance(s, 1);
    // Without consuming the tick at the early timer: a second probe 3 ms after each (0, 999, 1002, 1999, 2002, …).
    expect(s.probes.map((p) => p.at - s.probes[0].at)).toEqual([0, ...Array.from({ length: 10 }, (_, i) => i * 1000 + 999)]);
  });

  it('a probe that errored leaves the result as it was', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.answer.Readiness = 'error';
    s.host.addPod(pod([{ readinessProbe: probe({ successThreshold: 1 }) }]));
    await advance(s, 0);
    await advance(s, 10_000);
    expect(s.results()).toEqual(['app@c1 Readiness=Failure']);
    expect(s.batches.flatMap((b) => b.events).map((e) => e.message)).toEqual(['Readiness probe errored', 'Readiness probe errored']);
  });
});

describe('ProberHost: liveness and startup', () => {
  it('a liveness failure holds probing until a new instance, which starts at Success', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.answer.Liveness = 'Failure';
    s.host.addPod(pod([{ livenessProbe: probe({ failureThreshold: 3 }) }]));
    await advance(s, 0);
    for (let i = 0; i < 5; i++) {
      await advance(s, 10_000);
    }
    expect(s.probes).toHaveLength(3); // on hold after the third failure
    expect(s.results()).toEqual(['app@c1 Liveness=Success', 'app@c1 Liveness=Failure']);
    s.answer.Liveness = 'Success';
    s.statuses.set('u1', status(ctr('c1', 'exited', 0), ctr('c2', 'running', s.clock.now())));
    await advance(s, 10_000);
    expect(s.results().slice(2)).toEqual(['app@c1 Liveness=removed', 'app@c2 Liveness=Success']);
    expect(s.probes).toHaveLength(4);
  });

  it('a startup probe holds liveness and readiness back; once started it stops probing that instance', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.answer.Startup = 'Failure';
    s.host.addPod(pod([{ startupProbe: probe({ failureThreshold: 10 }), livenessProbe: probe(), readinessProbe: probe() }]));
    await advance(s, 0);
    await advance(s, 10_000);
    expect(s.probes.map((p) => p.type)).toEqual(['Startup', 'Startup']);
    s.answer.Startup = 'Success';
    await advance(s, 10_000);
    await advance(s, 10_000);
    const types = s.probes.map((p) => p.type);
    expect(types.filter((t) => t === 'Startup')).toHaveLength(3);
    expect(types.slice(3).sort()).toEqual(['Liveness', 'Readiness']);
    expect(s.results()).toContain('app@c1 Startup=Success');
  });

  it('initialDelaySeconds counts from the container start', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    const t0 = s.clock.now();
    s.host.addPod(pod([{ livenessProbe: probe({ initialDelaySeconds: 25 }) }]));
    await advance(s, 0);
    for (let i = 0; i < 4; i++) await advance(s, 10_000);
    expect(s.probes.map((p) => p.at - t0)).toEqual([30_000, 40_000]);
  });

  it('a pod being deleted: liveness and startup report Success and stop', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.host.addPod(pod([{ livenessProbe: probe(), startupProbe: probe() }], { deletionTimestamp: '2026-01-01T00:00:00Z' }));
    await advance(s, 0);
    expect(s.probes).toHaveLength(0);
    expect(s.host.workerCount).toBe(0);
    const startup = s.results().filter((r) => r.includes('Startup'));
    const liveness = s.results().filter((r) => r.includes('Liveness'));
    expect(startup).toEqual(['app@c1 Startup=Unknown', 'app@c1 Startup=Success', 'app@c1 Startup=removed']);
    expect(liveness).toEqual(['app@c1 Liveness=Success', 'app@c1 Liveness=removed']);
  });
});

describe('ProberHost: container exits and pod lifecycle', () => {
  it.each([
    ['Always', false, 1],
    ['Never', false, 0],
    ['Never', true, 1],
  ])('restartPolicy %s, sidecar %s: after the container exited, %s worker(s) remain', async (restartPolicy, sidecar, remaining) => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'exited', s.clock.now())));
    s.host.addPod(pod([{ livenessProbe: probe(), sidecar }], { restartPolicy }));
    await advance(s, 0);
    expect(s.host.workerCount).toBe(remaining);
    expect(s.results().slice(0, 2)).toEqual(['app@c1 Liveness=Success', 'app@c1 Liveness=Failure']);
    expect(s.probes).toHaveLength(0);
  });

  it('removePod, stopLivenessAndStartup and cleanupPods stop workers and drop their results', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.host.addPod(pod([{ livenessProbe: probe(), readinessProbe: probe() }]));
    await advance(s, 0);
    expect(s.host.workerCount).toBe(2);
    s.host.stopLivenessAndStartup('u1');
    await settle();
    expect(s.host.workerCount).toBe(1);
    expect(s.results()).toContain('app@c1 Liveness=removed');
    s.host.cleanupPods(['u1']);
    expect(s.host.workerCount).toBe(1);
    s.host.cleanupPods([]);
    await settle();
    expect(s.host.workerCount).toBe(0);
    expect(s.results().at(-1)).toBe('app@c1 Readiness=removed');
    await advance(s, 60_000);
    expect(s.probes).toHaveLength(2); // nothing after the stop
  });

  it('a duplicate addPod adds nothing', async () => {
    const s = setup();
    s.host.addPod(pod([{ readinessProbe: probe() }]));
    s.host.addPod(pod([{ readinessProbe: probe() }]));
    expect(s.host.workerCount).toBe(1);
  });
});

describe('ProberHost: start offset and metrics', () => {
  it('right after start the first probe waits a random part of the period; later pods probe at once', async () => {
    const s = setup({ freshHost: true, random: 0.25 });
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    const t0 = s.clock.now();
    s.host.addPod(pod([{ readinessProbe: probe() }]));
    await advance(s, 0);
    expect(s.probes).toHaveLength(0);
    await advance(s, 2499);
    expect(s.probes).toHaveLength(0);
    await advance(s, 1);
    expect(s.probes.map((p) => p.at - t0)).toEqual([2500]);
    s.clock.step(20_000);
    s.statuses.set('u2', { ...status(ctr('d1', 'running', s.clock.now())), uid: 'u2' });
    s.host.addPod(pod([{ readinessProbe: probe() }], { uid: 'u2', name: 'late' }));
    await advance(s, 0);
    expect(s.probes.filter((p) => p.target.podName === 'late').map((p) => p.at - s.clock.now())).toEqual([0]);
  });

  it('prober_probe_total and prober_probe_duration_seconds by worker; removed with the worker', async () => {
    const s = setup();
    s.statuses.set('u1', status(ctr('c1', 'running', s.clock.now())));
    s.host.addPod(pod([{ readinessProbe: probe() }]));
    await advance(s, 0);
    s.answer.Readiness = 'Failure';
    await advance(s, 10_000);
    const text = await s.host.registry.metrics();
    expect(text).toContain(
      'prober_probe_total{probe_type="Readiness",result="successful",container="app",pod="web",namespace="default",pod_uid="u1"} 1',
    );
    expect(text).toContain(
      'prober_probe_total{probe_type="Readiness",result="failed",container="app",pod="web",namespace="default",pod_uid="u1"} 1',
    );
    expect(text).toContain('prober_probe_duration_seconds_count{probe_type="Readiness",container="app",pod="web",namespace="default"} 1');
    s.host.removePod('u1');
    await settle();
    expect(await s.host.registry.metrics()).not.toContain('pod_uid="u1"');
  });
});
