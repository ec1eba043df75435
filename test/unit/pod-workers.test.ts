import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { Logger } from 'pino';
import { SyncBackoffError } from '../../src/common/errors.js';
import { CauseLog } from '../../src/common/cause-log.js';
import { createLogger } from '../../src/common/logger.js';
import { dirFailureCause } from '../../src/main/node/dir-failure-cause.js';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import {
  BACKOFF_PERIOD_MS,
  effectiveGracePeriod,
  PodWorkers,
  type PodSyncer,
  type SyncContext,
  type SyncPodType,
} from '../../src/main/pod-workers/pod-workers.js';
import { FakeClock } from '../fakes/fake-clock.js';

type Kind = 'sync' | 'terminating' | 'terminated' | 'runtime';
interface Call {
  kind: Kind;
  uid: string;
  updateType?: SyncPodType;
  pod: Pod;
  grace?: number;
  signal: AbortSignal;
  resolve: (v?: { terminal: boolean }) => void;
  reject: (e: unknown) => void;
}

/** A syncer whose calls stay pending until the test settles them (or autoResolve is on). */
class ManualSyncer implements PodSyncer {
  calls: Call[] = [];
  inFlight = new Map<string, number>();
  maxInFlight = 0;
  autoResolve = false;
  terminalOnSync = false;

  private record(kind: Kind, ctx: SyncContext, pod: Pod, extra: Partial<Call>): Promise<{ terminal: boolean }> {
    const uid = pod.metadata.uid!;
    const n = (this.inFlight.get(uid) ?? 0) + 1;
    this.inFlight.set(uid, n);
    this.maxInFlight = Math.max(this.maxInFlight, n);
    return new Promise<{ terminal: boolean }>((resolve, reject) => {
      const done = () => this.inFlight.set(uid, (this.inFlight.get(uid) ?? 1) - 1);
      const call: Call = {
        kind,
        uid,
        pod,
        signal: ctx.signal,
        ...extra,
        resolve: (v) => {
          done();
          resolve(v ?? { terminal: false });
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      this.calls.push(call);
      if (this.autoResolve) call.resolve({ terminal: kind === 'sync' && this.terminalOnSync });
    });
  }
  syncPod(ctx: SyncContext, updateType: SyncPodType, pod: Pod) {
    return this.record('sync', ctx, pod, { updateType });
  }
  async syncTerminatingPod(ctx: SyncContext, pod: Pod, grace: number) {
    await this.record('terminating', ctx, pod, { grace });
  }
  async syncTerminatedPod(ctx: SyncContext, pod: Pod) {
    await this.record('terminated', ctx, pod, {});
  }
  pending(): Call[] {
    return this.calls.filter((c) => (this.inFlight.get(c.uid) ?? 0) > 0).slice(-1);
  }
  last(): Call {
    return this.calls.at(-1)!;
  }
  kinds(uid = 'u1'): Kind[] {
    return this.calls.filter((c) => c.uid === uid).map((c) => c.kind);
  }
}

/** Lets every loop run to its next wait: a loop starts in a macrotask of its own, then runs on microtasks. */
const flush = async () => {
  for (let round = 0; round < 3; round++) {
    await nextMacrotask();
    for (let i = 0; i < 10; i++) await Promise.resolve();
  }
};

function pod(uid = 'u1', mutate: (p: Pod) => void = () => {}): Pod {
  const p: Pod = {
    metadata: { uid, name: `pod-${uid}`, namespace: 'default' },
    spec: { containers: [{ name: 'c' }], terminationGracePeriodSeconds: 30 },
  };
  mutate(p);
  return p;
}

function setup(logger?: Logger) {
  const clock = new FakeClock();
  const syncer = new ManualSyncer();
  const workers = new PodWorkers({ syncer, clock, resyncIntervalMs: 60_000, random: () => 0, ...(logger && { logger }) });
  return { clock, syncer, workers };
}

describe('PodWorkers', () => {
  it('create → one syncPod with the create update type', async () => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    workers.update({ pod: pod(), updateType: 'create' });
    await workers.idle();
    expect(syncer.calls.map((c) => [c.kind, c.updateType])).toEqual([['sync', 'create']]);
    expect(workers.stateOf('u1')).toBe('syncing');
    expect(workers.couldHaveRunningContainers('u1')).toBe(true);
  });

  it('updates in one synchronous burst coalesce into one sync', async () => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    workers.update({ pod: pod(), updateType: 'create' });
    workers.update({ pod: pod('u1', (p) => (p.metadata.labels = { v: '2' })), updateType: 'update' });
    await workers.idle();
    expect(syncer.calls).toHaveLength(1);
    expect(syncer.calls[0].pod.metadata.labels).toEqual({ v: '2' });
  });

  it('3 updates during a slow sync → exactly one more sync, with the last update; never two in flight', async () => {
    const { syncer, workers } = setup();
    workers.update({ pod: pod(), updateType: 'create' });
    await flush();
    expect(syncer.calls).toHaveLength(1);
    for (const v of ['a', 'b', 'c']) {
      workers.update({ pod: pod('u1', (p) => (p.metadata.labels = { v })), updateType: 'update' });
      await flush();
    }
    expect(syncer.calls).toHaveLength(1);
    syncer.calls[0].resolve();
    await flush();
    expect(syncer.calls).toHaveLength(2);
    expect(syncer.calls[1].pod.metadata.labels).toEqual({ v: 'c' });
    expect(syncer.calls[1].updateType).toBe('update');
    syncer.calls[1].resolve();
    await workers.idle();
    expect(syncer.calls).toHaveLength(2);
    expect(syncer.maxInFlight).toBe(1);
  });

  it('different pods sync concurrently', async () => {
    const { syncer, workers } = setup();
    workers.update({ pod: pod('u1'), updateType: 'create' });
    workers.update({ pod: pod('u2'), updateType: 'create' });
    await flush();
    expect(syncer.calls.map((c) => c.uid).sort()).toEqual(['u1', 'u2']);
    syncer.calls.forEach((c) => c.resolve());
    await workers.idle();
  });

  it('kill during sync aborts it, then terminating → terminated → finished', async () => {
    const { syncer, workers } = setup();
    workers.update({ pod: pod(), updateType: 'create' });
    await flush();
    const first = syncer.calls[0];
    expect(first.signal.aborted).toBe(false);
    workers.update({ pod: pod(), updateType: 'kill' });
    expect(first.signal.aborted).toBe(true);
    expect(workers.isPodTerminationRequested('u1')).toBe(true);
    expect(workers.shouldPodContainersBeTerminating('u1')).toBe(true);
    expect(workers.stateOf('u1')).toBe('terminating');
    first.reject(first.signal.reason);
    await flush();
    const term = syncer.last();
    expect(term.kind).toBe('terminating');
    expect(term.grace).toBe(30);
    expect(term.signal.aborted).toBe(false);
    term.resolve();
    await flush();
    expect(workers.isPodKnownTerminated('u1')).toBe(true);
    expect(workers.couldHaveRunningContainers('u1')).toBe(false);
    expect(workers.shouldPodRuntimeBeRemoved('u1')).toBe(true);
    expect(syncer.last().kind).toBe('terminated');
    syncer.last().resolve();
    await workers.idle();
    expect(syncer.kinds()).toEqual(['sync', 'terminating', 'terminated']);
    expect(workers.stateOf('u1')).toBe('finished');
    expect(workers.shouldPodBeFinished('u1')).toBe(true);
    expect(syncer.maxInFlight).toBe(1);
  });

  it.each([
    ['deletionTimestamp', (p: Pod) => (p.metadata.deletionTimestamp = '2024-01-01T00:00:00Z'), true],
    ['terminal phase', (p: Pod) => (p.status = { phase: 'Succeeded' }), false],
  ])('an update with %s starts termination', async (_n, mutate, deleted) => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    workers.update({ pod: pod(), updateType: 'create' });
    await workers.idle();
    workers.update({ pod: pod('u1', mutate), updateType: 'update' });
    await workers.idle();
    expect(syncer.kinds()).toEqual(['sync', 'terminating', 'terminated']);
    expect(workers.shouldPodContentBeRemoved('u1')).toBe(deleted);
  });

  it('syncPod reporting terminal moves the pod to terminating (natural completion)', async () => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    syncer.terminalOnSync = true;
    workers.update({ pod: pod(), updateType: 'create' });
    await workers.idle();
    expect(syncer.kinds()).toEqual(['sync', 'terminating', 'terminated']);
    expect(syncer.calls[1].grace).toBe(30);
  });

  it.each(['create', 'update', 'sync'] as const)('a terminated pod never restarts on a %s for the same UID', async (updateType) => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    workers.update({ pod: pod(), updateType: 'create' });
    workers.update({ pod: pod(), updateType: 'kill' });
    await workers.idle();
    const before = syncer.calls.length;
    workers.update({ pod: pod(), updateType });
    await workers.idle();
    expect(syncer.calls.length).toBe(before);
    expect(workers.stateOf('u1')).toBe('finished');
  });

  it('a create during termination runs no sync; syncKnownPods then purges the finished worker for restart', async () => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    workers.update({ pod: pod(), updateType: 'create' });
    workers.update({ pod: pod(), updateType: 'kill' });
    workers.update({ pod: pod(), updateType: 'create' });
    await workers.idle();
    expect(syncer.kinds()).toEqual(['terminating', 'terminated']);
    const known = workers.syncKnownPods([pod()]);
    expect(known.has('u1')).toBe(false);
    workers.update({ pod: pod(), updateType: 'create' });
    await workers.idle();
    expect(syncer.kinds().at(-1)).toBe('sync');
  });

  it('a shortened grace period aborts the running termination and restarts it with the shorter grace', async () => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    workers.update({ pod: pod(), updateType: 'create' });
    await workers.idle();
    syncer.autoResolve = false;
    workers.update({ pod: pod(), updateType: 'kill' });
    await flush();
    const slow = syncer.last();
    expect([slow.kind, slow.grace]).toEqual(['terminating', 30]);
    workers.update({ pod: pod(), updateType: 'kill', killPodOptions: { gracePeriodSeconds: 60 } });
    expect(slow.signal.aborted).toBe(false);
    workers.update({ pod: pod(), updateType: 'kill', killPodOptions: { gracePeriodSeconds: 5 } });
    expect(slow.signal.aborted).toBe(true);
    slow.reject(slow.signal.reason);
    await flush();
    const again = syncer.last();
    expect([again.kind, again.grace]).toEqual(['terminating', 5]);
    syncer.autoResolve = true;
    again.resolve();
    await workers.idle();
    expect(syncer.kinds()).toEqual(['sync', 'terminating', 'terminating', 'terminated']);
    expect(syncer.maxInFlight).toBe(1);
  });

  it('error → retry due after the 10 s backoff; success → due after syncFrequency', async () => {
    const { clock, syncer, workers } = setup();
    workers.update({ pod: pod(), updateType: 'create' });
    await flush();
    syncer.last().reject(new Error('boom'));
    await workers.idle();
    expect(workers.dueForResync(clock.now())).toEqual([]);
    clock.step(BACKOFF_PERIOD_MS - 1);
    expect(workers.dueForResync(clock.now())).toEqual([]);
    clock.step(1);
    expect(workers.dueForResync(clock.now())).toEqual(['u1']);
    expect(workers.dueForResync(clock.now())).toEqual([]);
    workers.update({ pod: pod(), updateType: 'sync' });
    await flush();
    syncer.last().resolve();
    await workers.idle();
    clock.step(59_999);
    expect(workers.dueForResync()).toEqual([]);
    clock.step(1);
    expect(workers.dueForResync()).toEqual(['u1']);
  });

  it('a sync that failed only on a running backoff is not logged as an error (upstream syncPod returns nil), and still retries after 10 s', async () => {
    const records: Record<string, unknown>[] = [];
    const logger = createLogger({
      format: 'json',
      verbosity: 0,
      destination: { write: (l: string) => void records.push(JSON.parse(l) as Record<string, unknown>) },
    });
    const { clock, syncer, workers } = setup(logger);
    workers.update({ pod: pod(), updateType: 'create' });
    await flush();
    syncer.last().reject(new SyncBackoffError('failed to "StartContainer" for "c" with CrashLoopBackOff: "back-off 10s"'));
    await workers.idle();
    expect(records).toEqual([]);
    clock.step(BACKOFF_PERIOD_MS);
    expect(workers.dueForResync(clock.now())).toEqual(['u1']);
    workers.update({ pod: pod(), updateType: 'sync' });
    await flush();
    syncer.last().reject(new Error('failed to "StartContainer" for "c" with CreateContainerError: "boom"'));
    await workers.idle();
    expect(records.map((r) => r.msg)).toEqual(['Error syncing pod, skipping']);
  });

  it('20 pods failing on a full root directory make one error line for the cause, and one when it clears', async () => {
    const records: Record<string, unknown>[] = [];
    const logger = createLogger({
      format: 'json',
      verbosity: 0,
      destination: { write: (l: string) => void records.push(JSON.parse(l) as Record<string, unknown>) },
    });
    const clock = new FakeClock();
    const syncer = new ManualSyncer();
    const of = dirFailureCause([{ path: '/var/lib/kubelet', what: 'the root directory' }]);
    const workers = new PodWorkers({ syncer, clock, random: () => 0, logger, causes: { of, log: new CauseLog(logger, clock) } });
    const uids = Array.from({ length: 20 }, (_, i) => `u${i}`);
    const enospc = 'Failed to create pod sandbox: mkdir /var/lib/kubelet/pods/x: no space left on device (ENOSPC)';
    const settled = new Set<object>();
    const settle = async (how: (c: (typeof syncer.calls)[number]) => void) => {
      await flush();
      for (const c of syncer.calls.filter((x) => !settled.has(x))) {
        settled.add(c);
        how(c);
      }
      await workers.idle();
    };
    for (let round = 0; round < 2; round++) {
      for (const uid of uids) workers.update({ pod: pod(uid), updateType: round === 0 ? 'create' : 'sync' });
      await settle((c) => c.reject(new Error(enospc)));
      clock.step(BACKOFF_PERIOD_MS);
    }
    // A pod's own error is still logged per pod.
    workers.update({ pod: pod('own'), updateType: 'create' });
    await settle((c) => c.reject(new Error('failed to "StartContainer" for "c" with CreateContainerError: "boom"')));
    const errors = records.filter((r) => String(r.msg).startsWith('Error syncing pod'));
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ cause: 'no space left on device (ENOSPC) in the root directory /var/lib/kubelet', failing: 1 });
    expect(errors[1]).toMatchObject({ podUID: 'own', err: 'failed to "StartContainer" for "c" with CreateContainerError: "boom"' });
    for (const uid of uids) workers.update({ pod: pod(uid), updateType: 'sync' });
    await settle((c) => c.resolve());
    const cleared = records.filter((r) => r.msg === 'A failure cause has cleared');
    expect(cleared).toEqual([expect.objectContaining({ affected: 20, suppressed: 39 })]);
  });

  it('backoff jitter adds up to 50%', async () => {
    const clock = new FakeClock();
    const syncer = new ManualSyncer();
    const workers = new PodWorkers({ syncer, clock, random: () => 0.999 });
    workers.update({ pod: pod(), updateType: 'create' });
    await flush();
    syncer.last().reject(new Error('network is not ready: cni config uninitialized'));
    await workers.idle();
    expect(workers.resyncDueAt('u1')! - clock.now()).toBeCloseTo(1000 * 1.4995, 0);
  });

  it('syncKnownPods prunes finished workers of undesired pods and terminates running orphans', async () => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    expect(workers.couldHaveRunningContainers('zz')).toBe(true);
    workers.update({ pod: pod('done'), updateType: 'create' });
    workers.update({ pod: pod('done'), updateType: 'kill' });
    workers.update({ pod: pod('run'), updateType: 'create' });
    workers.update({ pod: pod('keep'), updateType: 'create' });
    await workers.idle();
    expect(workers.stateOf('done')).toBe('finished');

    const known = workers.syncKnownPods([pod('keep')]);
    expect(workers.stateOf('done')).toBeUndefined();
    expect([...known.keys()].sort()).toEqual(['keep', 'run']);
    expect(known.get('run')).toMatchObject({ state: 'terminating', orphan: true, hasConfig: true });
    expect(known.get('keep')).toMatchObject({ state: 'syncing', orphan: false });
    expect(workers.couldHaveRunningContainers('zz')).toBe(false);
    expect(workers.shouldPodContentBeRemoved('zz')).toBe(true);

    await workers.idle();
    expect(syncer.kinds('run')).toEqual(['sync', 'terminating', 'terminated']);
    expect(workers.syncKnownPods([pod('keep')]).has('run')).toBe(false);
  });

  it('an orphan known only to the runtime is killed with grace 1 and then forgotten', async () => {
    const { syncer, workers } = setup();
    syncer.autoResolve = true;
    const runningPod = { uid: 'rt', name: 'old', namespace: 'ns', sandboxes: [], containers: [] };
    workers.update({ runningPod, updateType: 'sync' });
    await workers.idle();
    expect(syncer.calls).toHaveLength(0);
    workers.update({ runningPod, updateType: 'kill', killPodOptions: { gracePeriodSeconds: 1 } });
    await workers.idle();
    expect(syncer.calls.map((c) => [c.kind, c.grace, c.pod.metadata.name])).toEqual([['terminating', 1, 'old']]);
    expect(workers.stateOf('rt')).toBeUndefined();
  });

  it('static pods with the same full name start one at a time; the wait is logged at V(4) with its reason', async () => {
    const lines: string[] = [];
    const { syncer, workers } = setup(createLogger({ format: 'json', verbosity: 4, destination: { write: (s: string) => lines.push(s) } }));
    syncer.autoResolve = true;
    const staticPod = (uid: string) =>
      pod(uid, (p) => {
        p.metadata.name = 'web';
        p.metadata.annotations = { 'kubernetes.io/config.source': 'file' };
      });
    workers.update({ pod: staticPod('old'), updateType: 'create' });
    await workers.idle();
    syncer.autoResolve = false;
    workers.update({ pod: staticPod('old'), updateType: 'kill' });
    workers.update({ pod: staticPod('new'), updateType: 'create' });
    await flush();
    expect(syncer.kinds('new')).toEqual([]);
    expect(workers.isPodForMirrorPodTerminatingByFullName('web_default')).toBe(true);
    const gated = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.msg === 'Pod cannot start yet');
    expect(gated[0]).toMatchObject({
      v: 4,
      pod: 'web_default',
      podUID: 'new',
      reason: 'the static pod old with the same full name has not finished terminating',
    });
    syncer.autoResolve = true;
    syncer.last().resolve();
    await workers.idle();
    expect(syncer.kinds('old')).toEqual(['sync', 'terminating', 'terminated']);
    workers.update({ pod: staticPod('new'), updateType: 'sync' });
    await workers.idle();
    expect(syncer.kinds('new')).toEqual(['sync']);
  });
});

describe('effectiveGracePeriod', () => {
  const base = pod();
  it.each([
    ['spec default', 0, base, undefined, 30, false],
    ['override shortens', 30, base, 10, 10, true],
    ['override never lengthens', 10, base, 20, 10, false],
    ['deletion grace wins when smaller', 0, pod('u1', (p) => (p.metadata.deletionGracePeriodSeconds = 3)), undefined, 3, false],
    ['an override of 0 means as fast as possible: 1 s', 0, base, 0, 1, false],
    [
      'deletionGracePeriodSeconds 0 is 1 s, not the spec 30 s',
      0,
      pod('u1', (p) => (p.metadata.deletionGracePeriodSeconds = 0)),
      undefined,
      1,
      false,
    ],
    ['spec 0 → minimum 1 s', 0, pod('u1', (p) => (p.spec.terminationGracePeriodSeconds = 0)), undefined, 1, false],
    ['no spec value → 1', 0, pod('u1', (p) => (p.spec.terminationGracePeriodSeconds = undefined)), undefined, 1, false],
  ])('%s', (_n, current, p, override, want, shortened) => {
    expect(effectiveGracePeriod(current, p, override)).toEqual({ gracePeriod: want, shortened });
  });
});
