import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { untilAborted } from '../../src/common/until-aborted.js';

describe('untilAborted', () => {
  it('returns the work and leaves no listener on the signal', async () => {
    const ac = new AbortController();
    for (let i = 0; i < 50; i++) expect(await untilAborted(Promise.resolve(i), ac.signal)).toBe(i);
    await expect(untilAborted(Promise.reject(new Error('relist failed')), ac.signal)).rejects.toThrow('relist failed');
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with the reason when the signal aborts before the work answers, and removes its listener', async () => {
    const ac = new AbortController();
    const raced = untilAborted(new Promise<number>(() => undefined), ac.signal);
    ac.abort(new Error('loop ended'));
    await expect(raced).rejects.toThrow('loop ended');
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at once on an aborted signal, and swallows the late failure of the work', async () => {
    const ac = new AbortController();
    ac.abort(new Error('gone'));
    await expect(untilAborted(Promise.reject(new Error('worker gone')), ac.signal)).rejects.toThrow('gone');
  });
});
