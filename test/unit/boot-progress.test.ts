import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  BootProgress,
  INITIAL_PROGRESS,
  PENDING_NAMED,
  bootCounts,
  progressStep,
  type BootCounts,
  type PodCounts,
  type ProgressState,
} from '../../src/main/kubelet/boot-progress.js';
import { FakeClock } from '../fakes/fake-clock.js';

const counts = (c: Partial<PodCounts> = {}): PodCounts => ({ desired: 10, admitted: 10, running: 4, completed: 0, ...c });
const QUIET = 300_000;
const booting: ProgressState = { since: 0, booted: false, stallLogged: false };

describe('progressStep', () => {
  it.each<[string, ProgressState, PodCounts, boolean, number, ReturnType<typeof progressStep>['line']]>([
    ['booting: a progress line at info', booting, counts(), true, 5_000, { kind: 'progress', level: 'info' }],
    ['sources not all delivered: not converged', booting, counts({ running: 10 }), false, 5_000, { kind: 'progress', level: 'info' }],
    ['all running: the boot summary', booting, counts({ running: 10 }), true, 12_300, { kind: 'converged', elapsedMs: 12_300, boot: true }],
    [
      'running and completed: converged',
      booting,
      counts({ running: 7, completed: 3 }),
      true,
      1_000,
      { kind: 'converged', elapsedMs: 1_000, boot: true },
    ],
    [
      'rejected pods do not hold convergence',
      booting,
      counts({ admitted: 8, running: 8 }),
      true,
      1_000,
      { kind: 'converged', elapsedMs: 1_000, boot: true },
    ],
    ['converged and still converged: silent', INITIAL_PROGRESS, counts({ running: 10 }), true, 1_000, undefined],
    [
      'after the boot: progress at V(2)',
      { since: undefined, booted: true, stallLogged: false },
      counts(),
      true,
      1_000,
      { kind: 'progress', level: 'v2' },
    ],
    [
      'after the boot, converged again: a summary',
      { since: 500, booted: true, stallLogged: false },
      counts({ running: 10 }),
      true,
      2_000,
      { kind: 'converged', elapsedMs: 1_500, boot: false },
    ],
    ['a stalled boot: one warning', booting, counts(), true, QUIET, { kind: 'stalled', elapsedMs: QUIET }],
    [
      'after the stall warning: V(2)',
      { since: 0, booted: false, stallLogged: true },
      counts(),
      true,
      QUIET + 5_000,
      { kind: 'progress', level: 'v2' },
    ],
  ])('%s', (_name, state, c, ready, now, line) => {
    expect(progressStep(state, c, ready, now, QUIET).line).toEqual(line);
  });

  it('a new unconverged period starts when the node stops converging', () => {
    const { state } = progressStep({ since: undefined, booted: true, stallLogged: false }, counts(), true, 7_000, QUIET);
    expect(state).toEqual({ since: 7_000, booted: true, stallLogged: false });
  });
});

describe('bootCounts', () => {
  const pod = (uid: string, name: string) => ({ metadata: { uid, name, namespace: 'demo' } });
  it('names the admitted pods that are neither running nor completed, at most PENDING_NAMED of them', () => {
    const pods = [
      pod('a', 'web'),
      pod('b', 'job'),
      pod('c', 'stuck'),
      pod('d', 'huge'),
      ...[1, 2, 3, 4, 5, 6].map((i) => pod(`p${i}`, `p${i}`)),
    ];
    const phases: Record<string, string> = { a: 'Running', b: 'Succeeded', c: 'Pending' };
    const got = bootCounts(
      pods,
      (uid) => uid === 'd',
      (uid) => phases[uid],
    );
    expect(got).toEqual({
      desired: 10,
      admitted: 9,
      running: 1,
      completed: 1,
      pending: ['demo/stuck', 'demo/p1', 'demo/p2', 'demo/p3', 'demo/p4'],
    });
    expect(got.pending).toHaveLength(PENDING_NAMED);
  });
});

describe('BootProgress lines', () => {
  it('a progress line names the pending pods; a node whose sources have not been handled yet says nothing about being done', () => {
    const clock = new FakeClock();
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    let ready = false;
    let c: BootCounts = { desired: 0, admitted: 0, running: 0, completed: 0, pending: [] };
    const ac = new AbortController();
    new BootProgress({ clock, logger, counts: () => c, sourcesReady: () => ready }).start(ac.signal);
    clock.step(1_000); // sources not handled yet: 0 pods is not "all started"
    expect(lines.map((l) => l.msg)).toEqual(['Pods starting']);
    ready = true;
    c = { desired: 2, admitted: 2, running: 1, completed: 0, pending: ['demo/stuck'] };
    clock.step(5_000);
    expect(lines[1]).toMatchObject({ msg: 'Pods starting', running: 1, pending: ['demo/stuck'] });
    c = { desired: 2, admitted: 2, running: 2, completed: 0, pending: [] };
    clock.step(5_000);
    expect(lines[2]).toMatchObject({ msg: 'All pods started', desired: 2, running: 2 });
    ac.abort();
  });

  it('checks every second: the summary comes within a second of the convergence, progress lines at most every 5 s', () => {
    const clock = new FakeClock();
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    let c: BootCounts = { desired: 2, admitted: 2, running: 0, completed: 0, pending: ['demo/a', 'demo/b'] };
    const ac = new AbortController();
    new BootProgress({ clock, logger, counts: () => c, sourcesReady: () => true }).start(ac.signal);
    clock.step(7_000);
    expect(lines.map((l) => l.msg)).toEqual(['Pods starting', 'Pods starting']);
    clock.step(500);
    c = { desired: 2, admitted: 2, running: 2, completed: 0, pending: [] };
    clock.step(500);
    expect(lines[2]).toMatchObject({ msg: 'All pods started', seconds: 8 });
    ac.abort();
  });
});
