import { describe, expect, it } from 'vitest';
import { ResyncQueue } from '../../src/main/pod-workers/resync-queue.js';
import { FakeClock } from '../fakes/fake-clock.js';

describe('ResyncQueue', () => {
  it('returns each UID once its time has come, and dequeues it', () => {
    const clock = new FakeClock();
    const q = new ResyncQueue(clock);
    q.enqueue('a', 1000);
    q.enqueue('b', 0);
    expect(q.getWork()).toEqual(['b']);
    expect(q.getWork()).toEqual([]);
    expect(q.dueAtOf('a')).toBe(clock.now() + 1000);
    expect(q.getWork(clock.now() + 999)).toEqual([]);
    expect(q.getWork(clock.now() + 1000)).toEqual(['a']);
    expect(q.dueAtOf('a')).toBeUndefined();
  });

  it('keeps one time per UID: a later enqueue replaces it; forget drops it', () => {
    const clock = new FakeClock();
    const q = new ResyncQueue(clock);
    q.enqueue('a', 10_000);
    q.enqueue('a', 5);
    expect(q.getWork(clock.now() + 5)).toEqual(['a']);
    q.enqueue('b', 0);
    q.forget('b');
    expect(q.getWork(clock.now() + 60_000)).toEqual([]);
  });
});
