/**
 * Per-key exponential backoff as plain data (upstream
 * k8s.io/client-go/util/flowcontrol.Backoff without jitter, configured as the
 * kubelet configures it for CrashLoopBackOff and ImagePullBackOff).
 *
 * Contract:
 *  - The state is a plain record passed into a worker task and returned from
 *    it; workers keep none. Every function is pure and never mutates its input
 *    state: those that change it return a new record.
 *  - Times are milliseconds since the epoch supplied by the caller (`now`
 *    comes from the injected clock on the main thread; no Date.now() here).
 *  - An entry expires (the next hit starts again from the initial delay) when
 *    the event being judged is more than `resetAfterMs` after the entry's last
 *    update: for containers, "ran for 10 minutes without crashing".
 */
import type { Container, Pod } from '../api/pod.js';
import type { PodStatus } from '../runtime/types.js';
import { hashContainer } from './container-hash.js';
import { findLatestExitedStatus } from './restart-policy.js';

export interface BackoffEntry {
  /** Current delay. */
  backoffMs: number;
  /** When the delay was last raised (`now` of the last next()). */
  lastUpdate: number;
}

export type BackoffState = Record<string, BackoffEntry>;

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** Entries older than this (relative to the event judged) are forgotten. */
  resetAfterMs: number;
}

/** kubelet crashLoopBackOff: 10 s doubling to 300 s; reset after 600 s (HasExpiredFunc). */
export const CRASH_LOOP_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 });
/** kubelet imageBackOff: 10 s doubling to 300 s; flowcontrol's default expiry of 2 × max. */
export const IMAGE_PULL_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 });

function expired(entry: BackoffEntry, eventTime: number, policy: BackoffPolicy): boolean {
  return eventTime - entry.lastUpdate > policy.resetAfterMs;
}

/** The key's entry unless absent or expired as judged at `eventTime`. */
function liveEntry(state: BackoffState, key: string, eventTime: number, policy: BackoffPolicy): BackoffEntry | undefined {
  const entry = state[key];
  return entry && !expired(entry, eventTime, policy) ? entry : undefined;
}

/** The current delay for key (0 when there is no entry). */
export function getBackoff(state: BackoffState, key: string): number {
  return state[key]?.backoffMs ?? 0;
}

/**
 * Upstream IsInBackOffSince: true when less than the key's current delay has
 * passed since `eventTime` (for a container: when its last instance exited).
 */
export function isInBackOffSince(
  state: BackoffState,
  key: string,
  eventTime: number,
  now: number,
  policy: BackoffPolicy = CRASH_LOOP_BACKOFF,
): boolean {
  const entry = liveEntry(state, key, eventTime, policy);
  return entry !== undefined && now - eventTime < entry.backoffMs;
}

/**
 * Upstream IsInBackOffSinceUpdate: true when less than the key's current
 * delay has passed between the key's last update (the last failure, when
 * next() was called) and `eventTime` (normally now). Image pulls back off
 * this way: 10 s, 20 s, 40 s … after each failed pull.
 */
export function isInBackOffSinceUpdate(
  state: BackoffState,
  key: string,
  eventTime: number,
  policy: BackoffPolicy = IMAGE_PULL_BACKOFF,
): boolean {
  const entry = liveEntry(state, key, eventTime, policy);
  return entry !== undefined && eventTime - entry.lastUpdate < entry.backoffMs;
}

/**
 * Upstream Next: starts the key at the initial delay (new or expired entry,
 * judged at `eventTime`, default `now`) or doubles it up to the maximum.
 */
export function next(
  state: BackoffState,
  key: string,
  now: number,
  opts: { eventTime?: number; policy?: BackoffPolicy } = {},
): BackoffState {
  const policy = opts.policy ?? CRASH_LOOP_BACKOFF;
  const eventTime = opts.eventTime ?? now;
  const entry = state[key];
  const backoffMs = !entry || expired(entry, eventTime, policy) ? policy.initialMs : Math.min(entry.backoffMs * 2, policy.maxMs);
  return { ...state, [key]: { backoffMs, lastUpdate: now } };
}

/** Upstream Reset: forgets key. */
export function reset(state: BackoffState, key: string): BackoffState {
  if (!(key in state)) return state;
  const { [key]: _dropped, ...rest } = state;
  return rest;
}

/** Upstream GC: drops entries that have expired as of `now`. Returns the same object when nothing changed. */
export function gc(state: BackoffState, now: number, policy: BackoffPolicy = CRASH_LOOP_BACKOFF): BackoffState {
  let out: BackoffState | undefined;
  for (const [k, e] of Object.entries(state)) {
    if (!expired(e, now, policy)) continue;
    out ??= { ...state };
    delete out[k];
  }
  return out ?? state;
}

/**
 * Upstream GetStableKey: `<pod name>_<namespace>_<uid>_<container>_<hash>`.
 * The hash makes a changed container (new image) start with a fresh backoff.
 */
export function backoffKey(pod: Pod, container: Pick<Container, 'name' | 'image'>): string {
  const m = pod.metadata;
  return `${m.name ?? ''}_${m.namespace ?? ''}_${m.uid ?? ''}_${container.name}_${hashContainer(container)}`;
}

/** Upstream format.Pod: `<name>_<namespace>(<uid>)`. */
export function formatPod(pod: Pod): string {
  const m = pod.metadata;
  return `${m.name ?? ''}_${m.namespace ?? ''}(${m.uid ?? ''})`;
}

/** A duration as Go's time.Duration.String() prints it: 10s, 1m20s, 5m0s, 1h0m0s, 500ms. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (Math.abs(ms) < 1000) return `${ms}ms`;
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = (rest / 1000).toFixed(3).replace(/\.?0+$/, '');
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

export interface BackOffDecision {
  inBackoff: boolean;
  /** 'CrashLoopBackOff' when inBackoff, else ''. */
  reason: 'CrashLoopBackOff' | '';
  /** Upstream's error text, e.g. `back-off 20s restarting failed container=web pod=web_default(uid)`. */
  message: string;
  /** Upstream's BackOff event text (Warning, reason "BackOff"); '' when not in backoff. */
  eventMessage: string;
  /** The state to hand back to the caller (unchanged when inBackoff or nothing exited). */
  state: BackoffState;
}

/**
 * Upstream doBackOff, run just before starting a container: measured from when
 * the container's newest exited instance finished. Not in backoff → the key
 * advances (so the *next* crash waits longer) and the start may proceed.
 */
export function doBackOff(
  state: BackoffState,
  pod: Pod,
  container: Pick<Container, 'name' | 'image'>,
  podStatus: PodStatus,
  now: number,
  policy: BackoffPolicy = CRASH_LOOP_BACKOFF,
): BackOffDecision {
  const exited = findLatestExitedStatus(podStatus, container.name);
  if (!exited) return { inBackoff: false, reason: '', message: '', eventMessage: '', state };
  const finishedAt = Number(exited.finishedAt / 1_000_000n);
  const key = backoffKey(pod, container);
  if (isInBackOffSince(state, key, finishedAt, now, policy)) {
    return {
      inBackoff: true,
      reason: 'CrashLoopBackOff',
      message: `back-off ${formatGoDuration(getBackoff(state, key))} restarting failed container=${container.name} pod=${formatPod(pod)}`,
      eventMessage: `Back-off restarting failed container ${container.name} in pod ${formatPod(pod)}`,
      state,
    };
  }
  return { inBackoff: false, reason: '', message: '', eventMessage: '', state: next(state, key, now, { eventTime: finishedAt, policy }) };
}
