/** The fault suite's hold window (test/faults/hold.ts): a recovery counts only once every check held for the window. */
import { describe, expect, it } from 'vitest';
import { holdPoll, initialHold, type HoldState } from '../faults/hold.js';

/** Polls 250 ms apart from t=0, each passing (undefined) or naming what failed; stops at the first that held. */
function poll(results: (string | undefined)[], windowMs: number): { heldAt?: number; state: HoldState } {
  let state = initialHold();
  for (const [i, missing] of results.entries()) {
    const at = i * 250;
    const r = holdPoll(state, at, missing, windowMs);
    state = r.state;
    if (r.held) return { heldAt: at, state };
  }
  return { state };
}
const pass = (n: number) => Array<undefined>(n).fill(undefined);
const fail = (n: number, what = 'p1: Ready False') => Array<string>(n).fill(what);

describe('holdPoll', () => {
  it('counts a node recovered only once every check passed for the whole window, timed from the streak start', () => {
    // Fails 1 s, then passes: the first pass at 1 s holds 5 s at 6 s; recovery is 1 s.
    const r = poll([...fail(4), ...pass(30)], 5000);
    expect([r.heldAt, r.state.streakFrom, r.state.firstPassAt, r.state.breaks]).toEqual([6000, 1000, 1000, 0]);
  });

  it('a check that breaks inside the window starts the streak again: recovery is the last streak start, the break counted', () => {
    // Passes at 1 s, breaks at 3 s for 2 s (the node controller's Ready flip), passes again from 5 s.
    const r = poll([...fail(4), ...pass(8), ...fail(8, 'p7: Ready False'), ...pass(40)], 5000);
    expect(r.heldAt).toBe(10_000);
    expect(r.state).toEqual({ firstPassAt: 1000, streakFrom: 5000, breaks: 1, brokeOn: [{ at: 3000, what: 'p7: Ready False' }] });
  });

  it('is not recovered while no streak reaches the window', () => {
    const flapping = Array.from({ length: 100 }, (_, i) => (i % 12 < 6 ? undefined : 'dup'));
    const r = poll(flapping, 5000);
    expect(r.heldAt).toBeUndefined();
    expect(r.state.breaks).toBe(8);
    expect(r.state.brokeOn).toHaveLength(3);
  });

  it('with a window of 0 the first pass counts, as before the hold', () => {
    const r = poll([...fail(2), ...pass(1)], 0);
    expect([r.heldAt, r.state.breaks]).toEqual([500, 0]);
  });

  it('failing polls before the first pass are not breaks', () => {
    const r = poll([...fail(10), ...pass(21)], 5000);
    expect([r.heldAt, r.state.breaks, r.state.brokeOn]).toEqual([7500, 0, []]);
  });
});
