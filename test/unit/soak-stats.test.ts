import { describe, expect, it } from 'vitest';
import { crashLoopRestarts, floorSeries, judgeSoak, median, slopePerHour, type SoakSample } from '../../bench/lib/soak-stats.js';

const sample = (t: number, over: Partial<SoakSample> = {}): SoakSample => ({
  t,
  rssMiB: 100,
  heapMiB: 30,
  fds: 40,
  lagP99Ms: 12,
  lagMaxMs: 20,
  logBytes: t * 10,
  ...over,
});

describe('slopePerHour', () => {
  it('fits a line exactly, in units per hour', () => {
    expect(slopePerHour([0, 60, 120, 180].map((t) => ({ t, y: 5 + t / 360 })))).toBeCloseTo(10, 9);
    expect(slopePerHour([0, 10, 20].map((t) => ({ t, y: 7 })))).toBe(0);
  });
  it('is the least-squares slope of noisy points', () => {
    // (0,0) (1,2) (2,1): slope 0.5 per second.
    expect(
      slopePerHour([
        { t: 0, y: 0 },
        { t: 1, y: 2 },
        { t: 2, y: 1 },
      ]),
    ).toBeCloseTo(1800, 9);
  });
  it('is 0 for fewer than two points or one time', () => {
    expect(slopePerHour([])).toBe(0);
    expect(slopePerHour([{ t: 3, y: 1 }])).toBe(0);
    expect(
      slopePerHour([
        { t: 3, y: 1 },
        { t: 3, y: 9 },
      ]),
    ).toBe(0);
  });
});

describe('floorSeries', () => {
  it('keeps the lowest point of each bin, at its middle', () => {
    const pts = [
      { t: 0, y: 5 },
      { t: 30, y: 3 },
      { t: 59, y: 9 },
      { t: 60, y: 7 },
      { t: 130, y: 8 },
      { t: 170, y: 6 },
    ];
    expect(floorSeries(pts)).toEqual([
      { t: 30, y: 3 },
      { t: 90, y: 7 },
      { t: 150, y: 6 },
    ]);
  });
  it('sees a rising floor under a sawtooth whose peaks do not rise', () => {
    // Peaks stay at 60 MiB; the floor after each collection rises 1 MiB a minute (60 MiB/h).
    const pts = Array.from({ length: 180 }, (_, i) => ({ t: i * 10, y: i % 6 === 0 ? 20 + i / 6 : 60 }));
    expect(slopePerHour(floorSeries(pts))).toBeCloseTo(60, 6);
  });
});

describe('median', () => {
  it('takes the middle, or the mean of the two middles', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe('judgeSoak', () => {
  const times = Array.from({ length: 181 }, (_, i) => i * 10); // 30 min every 10 s
  it('holds a flat run and reports its log rate', () => {
    const v = judgeSoak(
      times.map((t) => sample(t)),
      300,
    );
    expect(v.held).toBe(true);
    expect(v.broken).toEqual([]);
    expect(v.warmupLevel).toEqual({ rssMiB: 100, heapMiB: 30, fds: 40 });
    expect(v.rssSlopeMiBPerHour).toBe(0);
    expect(v.logBytesPerHour).toBeCloseTo(36_000, 6);
    expect(v.steadySamples).toBe(151);
  });
  it('breaks on an RSS slope over the bound even below +30 %', () => {
    // 12 MiB/h from the warm-up on: 100 → 105 MiB by 30 min.
    const v = judgeSoak(
      times.map((t) => sample(t, { rssMiB: 100 + (Math.max(0, t - 300) * 12) / 3600 })),
      300,
    );
    expect(v.rssSlopeMiBPerHour).toBeCloseTo(12, 6);
    expect(v.held).toBe(false);
    expect(v.broken).toEqual(['RSS slope 12 MiB/h > 10 MiB/h']);
  });
  it('breaks on a rising heap floor, not on a sawtooth', () => {
    const saw = (t: number, rise: number) => (t % 60 === 0 ? 20 + (t / 3600) * rise : 50);
    expect(
      judgeSoak(
        times.map((t) => sample(t, { heapMiB: saw(t, 0) })),
        300,
      ).held,
    ).toBe(true);
    const v = judgeSoak(
      times.map((t) => sample(t, { heapMiB: saw(t, 8) })),
      300,
    );
    expect(v.heapFloorSlopeMiBPerHour).toBeCloseTo(8, 6);
    expect(v.broken).toEqual(['heap floor slope 8 MiB/h > 5 MiB/h']);
  });
  it('breaks on one RSS sample over the warm-up level + 30 %, on fds and on lag growth', () => {
    const v = judgeSoak(
      times.map((t) => sample(t, t === 900 ? { rssMiB: 131, heapMiB: 40, fds: 57 } : t > 1500 ? { lagP99Ms: 25 } : {})),
      300,
    );
    expect(v.max).toEqual({ rssMiB: 131, heapMiB: 40, fds: 57 });
    expect(v.broken).toEqual([
      'RSS 131 MiB > warm-up level 100 MiB + 30 %',
      '57 fds > warm-up level 40 + 16',
      'event-loop lag p99 (median of 10 s windows) 25 ms in the last 5 min > 12 ms after warm-up + 10 ms',
    ]);
  });
  it('takes the warm-up level from its last minute, not its start', () => {
    const v = judgeSoak(
      times.map((t) => sample(t, { rssMiB: t < 240 ? 60 : 100 })),
      300,
    );
    expect(v.warmupLevel.rssMiB).toBe(100);
    expect(v.held).toBe(true);
  });
  it('refuses a run too short to judge', () => {
    expect(() => judgeSoak([sample(0), sample(10)], 300)).toThrow(/no sample in the last minute/);
    expect(() => judgeSoak([sample(250), sample(300)], 300)).toThrow(/1 sample\(s\) after/);
  });
});

describe('crashLoopRestarts', () => {
  it('restarts at once after the first exit, then waits 10, 20, 40 … 300 s', () => {
    // run 2 s: exits at 2 → restart 1 at 2; exit 4 → +10 → restart 2 at 14; exit 16 → +20 → 36;
    // exit 38 → +40 → 78; 80 → +80 → 160; 162 → +160 → 322; 324 → +300 → 624; 626 → +300 → 926.
    const at = [2, 14, 36, 78, 160, 322, 624, 926];
    at.forEach((t, i) => {
      expect(crashLoopRestarts(t, 2)).toBe(i + 1);
      expect(crashLoopRestarts(t - 0.5, 2)).toBe(i);
    });
    expect(crashLoopRestarts(1, 2)).toBe(0);
  });
  it('counts fewer restarts when each is late', () => {
    // on time: … 926, 1228, 1530, 1832 (next 2134).
    expect(crashLoopRestarts(2100, 2)).toBe(11);
    // late 30 s: 32, 74, 126, 198, 310, 502, 834, 1166, 1498, 1830 (next 2162).
    expect(crashLoopRestarts(2100, 2, 30)).toBe(10);
  });
});
