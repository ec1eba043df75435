import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { untilLoopEnds } from '../../src/main/pleg/generic-pleg.js';

describe('untilLoopEnds', () => {
  it('returns the work and leaves no listener on the loop-end signal', async () => {
    const ended = new AbortController();
    for (let i = 0; i < 50; i++) expect(await untilLoopEnds(Promise.resolve(i), ended.signal)).toBe(i);
    await expect(untilLoopEnds(Promise.reject(new Error('relist failed')), ended.signal)).rejects.toThrow('relist failed');
    expect(getEventListeners(ended.signal, 'abort')).toHaveLength(0);
  });

  it('resolves undefined when the loop ends before the work answers', async () => {
    const ended = new AbortController();
    const never = new Promise<number>(() => undefined);
    const raced = untilLoopEnds(never, ended.signal);
    ended.abort();
    await expect(raced).resolves.toBeUndefined();
    expect(getEventListeners(ended.signal, 'abort')).toHaveLength(0);
  });

  it('does not wait for work started after the loop ended, and swallows its failure', async () => {
    const ended = new AbortController();
    ended.abort();
    await expect(untilLoopEnds(Promise.reject(new Error('worker gone')), ended.signal)).resolves.toBeUndefined();
  });
});
