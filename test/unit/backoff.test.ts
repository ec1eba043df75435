import { describe, expect, it } from 'vitest';
import { PodSchema } from '../../src/api/pod.js';
import type { PodStatus } from '../../src/runtime/types.js';
import {
  CRASH_LOOP_BACKOFF,
  backoffKey,
  doBackOff,
  formatGoDuration,
  gc,
  getBackoff,
  isInBackOffSince,
  next,
  reset,
  type BackoffState,
} from '../../src/pod/backoff.js';
import { hashContainer } from '../../src/pod/container-hash.js';

const T0 = 1_700_000_000_000;
const S = 1000;

describe('backoff state', () => {
  it('starts at 10 s, doubles, caps at 300 s', () => {
    let st: BackoffState = {};
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      st = next(st, 'k', T0 + i * S);
      seen.push(getBackoff(st, 'k'));
    }
    expect(seen).toEqual([10, 20, 40, 80, 160, 300, 300, 300].map((x) => x * S));
  });

  it('never mutates the input state', () => {
    const st: BackoffState = {};
    const st2 = next(st, 'k', T0);
    expect(st).toEqual({});
    expect(st2).toEqual({ k: { backoffMs: 10 * S, lastUpdate: T0 } });
    expect(structuredClone(st2)).toEqual(st2);
  });

  it('isInBackOffSince: within the delay after the event', () => {
    const st = next(next({}, 'k', T0), 'k', T0); // 20 s
    expect(isInBackOffSince(st, 'k', T0, T0 + 19 * S)).toBe(true);
    expect(isInBackOffSince(st, 'k', T0, T0 + 20 * S)).toBe(false);
    expect(isInBackOffSince(st, 'other', T0, T0)).toBe(false);
  });

  it('resets after 10 minutes without a hit', () => {
    let st = next(next(next({}, 'k', T0), 'k', T0), 'k', T0); // 40 s
    const later = T0 + 600 * S + 1;
    expect(isInBackOffSince(st, 'k', later, later)).toBe(false);
    st = next(st, 'k', later);
    expect(getBackoff(st, 'k')).toBe(10 * S);
  });

  it('exactly 10 minutes is not yet expired', () => {
    const st = next(next({}, 'k', T0), 'k', T0);
    expect(getBackoff(next(st, 'k', T0 + 600 * S), 'k')).toBe(40 * S);
  });

  it('gc drops expired entries only', () => {
    const st: BackoffState = { old: { backoffMs: 10 * S, lastUpdate: T0 }, fresh: { backoffMs: 10 * S, lastUpdate: T0 + 500 * S } };
    const out = gc(st, T0 + 601 * S);
    expect(Object.keys(out)).toEqual(['fresh']);
    expect(gc(out, T0 + 601 * S)).toBe(out);
    expect(reset(out, 'fresh')).toEqual({});
  });
});

describe('formatGoDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [10_000, '10s'],
    [80_000, '1m20s'],
    [300_000, '5m0s'],
    [1_500, '1.5s'],
    [3_600_000, '1h0m0s'],
  ])('%d → %s', (ms, s) => {
    expect(formatGoDuration(ms)).toBe(s);
  });
});

describe('doBackOff', () => {
  const pod = PodSchema.parse({
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'app', image: 'busybox' }] },
  });
  const c = pod.spec.containers[0];
  const finishedAt = BigInt(T0) * 1_000_000n;
  const status: PodStatus = {
    uid: 'u1',
    name: 'web',
    namespace: 'default',
    ips: [],
    sandboxStatuses: [],
    timestamp: T0,
    containerStatuses: [
      {
        id: 'c1',
        name: 'app',
        state: 'exited',
        createdAt: 1n,
        startedAt: 1n,
        finishedAt,
        exitCode: 1,
        reason: 'Error',
        message: '',
        image: 'busybox',
        imageRef: 'busybox',
        restartCount: 0,
        hash: '',
        sandboxId: 's',
      },
    ],
  };

  it('uses upstream GetStableKey: name_namespace_uid_container_hash', () => {
    expect(backoffKey(pod, c)).toBe(`web_default_u1_app_${hashContainer(c)}`);
  });

  it('first crash: not in backoff, key advances to 10 s', () => {
    const d = doBackOff({}, pod, c, status, T0 + S);
    expect(d.inBackoff).toBe(false);
    expect(getBackoff(d.state, backoffKey(pod, c))).toBe(10 * S);
  });

  it('second crash within the delay: CrashLoopBackOff with upstream wording', () => {
    const st = next(next({}, backoffKey(pod, c), T0), backoffKey(pod, c), T0);
    const d = doBackOff(st, pod, c, status, T0 + 5 * S);
    expect(d).toMatchObject({
      inBackoff: true,
      reason: 'CrashLoopBackOff',
      message: 'back-off 20s restarting failed container=app pod=web_default(u1)',
      eventMessage: 'Back-off restarting failed container app in pod web_default(u1)',
    });
    expect(d.state).toBe(st);
  });

  it('no exited instance: nothing to back off from', () => {
    const d = doBackOff({}, pod, c, { ...status, containerStatuses: [] }, T0);
    expect(d).toMatchObject({ inBackoff: false, state: {} });
  });

  it('policy constants match the kubelet', () => {
    expect(CRASH_LOOP_BACKOFF).toEqual({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 });
  });
});
