import { describe, expect, it } from 'vitest';
import { collectSources, parseSourceArg } from '../../src/compare/collect.js';
import { FakeClock } from '../fakes/fake-clock.js';

/** Steps the fake clock until the promise settles. */
async function drive<T>(clock: FakeClock, p: Promise<T>, stepMs = 250): Promise<T> {
  let done = false;
  const out = p.finally(() => (done = true));
  for (let i = 0; i < 10_000 && !done; i++) {
    await new Promise((r) => setImmediate(r));
    clock.step(stepMs);
  }
  return out;
}

describe('collectSources', () => {
  it('scrapes every URL at the start and end of the window and reports progress', async () => {
    const clock = new FakeClock(1_000_000);
    const calls: [string, number][] = [];
    const progress: number[] = [];
    const scrape = async (url: string) => {
      calls.push([url, clock.now()]);
      return `kubelet_x ${clock.now()}\n`;
    };
    const files: Record<string, string> = { 'old.txt': 'kubelet_x 1\n' };
    const got = await drive(
      clock,
      collectSources(['a=http://a/metrics', 'http://b:9/metrics', 'old.txt'].map(parseSourceArg), 3000, {
        clock,
        scrape,
        readFile: (p) => ({ text: files[p], mtimeMs: 5 }),
        progress: (e) => progress.push(e),
      }),
    );
    expect(calls.map(([u]) => u)).toEqual(['http://a/metrics', 'http://b:9/metrics', 'http://a/metrics', 'http://b:9/metrics']);
    expect(calls[2][1] - calls[0][1]).toBeGreaterThanOrEqual(3000);
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(3000);
    expect(got.map((s) => [s.name, s.origin, s.start !== undefined])).toEqual([
      ['a', 'http://a/metrics', true],
      ['b:9', 'http://b:9/metrics', true],
      ['old', 'old.txt', false],
    ]);
    expect(got[0].end.timeMs - got[0].start!.timeMs).toBeGreaterThanOrEqual(3000);
  });

  it('a window of 0 scrapes once', async () => {
    const clock = new FakeClock();
    let n = 0;
    const got = await collectSources([parseSourceArg('http://a/metrics')], 0, {
      clock,
      scrape: async () => `kubelet_x ${++n}\n`,
      readFile: () => ({ text: '', mtimeMs: 0 }),
    });
    expect(n).toBe(1);
    expect(got[0].start).toBeUndefined();
  });

  it('fails before the window when a start scrape is rejected by checkStart', async () => {
    const clock = new FakeClock();
    const p = collectSources([parseSourceArg('http://a/metrics')], 60_000, {
      clock,
      scrape: async () => 'go_goroutines 1\n',
      readFile: () => ({ text: '', mtimeMs: 0 }),
      checkStart: () => {
        throw new Error('not a kubelet');
      },
    });
    await expect(p).rejects.toThrow('not a kubelet');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('repeated names get #2; a BEFORE,AFTER pair becomes one windowed source', async () => {
    const clock = new FakeClock();
    const files: Record<string, { text: string; mtimeMs: number }> = {
      'a.txt': { text: 'k 1\n', mtimeMs: 1000 },
      'b.txt': { text: 'k 2\n', mtimeMs: 61_000 },
    };
    const got = await collectSources(['n=a.txt', 'n=a.txt', 'p=a.txt,b.txt'].map(parseSourceArg), 0, {
      clock,
      scrape: async () => '',
      readFile: (p) => files[p],
    });
    expect(got.map((s) => s.name)).toEqual(['n', 'n#2', 'p']);
    expect(got[2].start?.timeMs).toBe(1000);
    expect(got[2].end.timeMs).toBe(61_000);
    await expect(
      collectSources([parseSourceArg('b.txt,a.txt')], 0, { clock, scrape: async () => '', readFile: (p) => files[p] }),
    ).rejects.toThrow(/b.txt is older than a.txt|a.txt is older than b.txt/);
  });
});
