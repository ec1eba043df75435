import { describe, expect, it } from 'vitest';
import { INITIAL_PROGRESS, progressStep, type PodCounts, type ProgressState } from '../../src/main/kubelet/boot-progress.js';

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
