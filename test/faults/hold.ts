/**
 * A recovery that must hold: the node counts as recovered only once every
 * check has passed at every poll for a hold window, and its recovery time is
 * the start of that final unbroken passing streak. A check that breaks inside
 * the window (the node controller marking pods not Ready after an outage)
 * starts the streak again and is counted ("broke after first pass").
 * Pure: the runner feeds it one poll at a time.
 */

/**
 * The hold window of a fault that names none: long enough for a flip seen a few polls after the first pass
 * (a container restarted by a sync that was already under way, a status written back late) to be counted.
 */
export const DEFAULT_HOLD_MS = 5000;

export interface HoldState {
  /** The first poll at which every check passed. */
  firstPassAt?: number;
  /** The first passing poll of the current unbroken streak (undefined while a check fails). */
  streakFrom?: number;
  /** Passing streaks that broke (every one after the first pass). */
  breaks: number;
  /** What failed at the first poll of each break (the first 3). */
  brokeOn: { at: number; what: string }[];
}

export const initialHold = (): HoldState => ({ breaks: 0, brokeOn: [] });

/** The state after a poll at `at` that found `missing` (undefined: every check passed). */
export function holdStep(s: HoldState, at: number, missing: string | undefined): HoldState {
  if (missing === undefined) return { ...s, firstPassAt: s.firstPassAt ?? at, streakFrom: s.streakFrom ?? at };
  if (s.streakFrom === undefined) return s;
  const brokeOn = s.brokeOn.length < 3 ? [...s.brokeOn, { at, what: missing }] : s.brokeOn;
  return { ...s, streakFrom: undefined, breaks: s.breaks + 1, brokeOn };
}

/** One poll: the next state, and whether the streak it belongs to has now held for `windowMs` (recovered). */
export function holdPoll(s: HoldState, at: number, missing: string | undefined, windowMs: number): { state: HoldState; held: boolean } {
  const state = holdStep(s, at, missing);
  return { state, held: state.streakFrom !== undefined && at - state.streakFrom >= windowMs };
}
