import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { applyOomScoreAdj, swapProblem, type ProcFs } from '../../src/main/node/process-setup.js';

const HEADER = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';
const fs = (swaps: string | Error, writes: [string, string][] = [], writeError?: Error): ProcFs => ({
  read: () => {
    if (swaps instanceof Error) throw swaps;
    return swaps;
  },
  write: (p, d) => {
    if (writeError) throw writeError;
    writes.push([p, d]);
  },
});

describe('failSwapOn', () => {
  it.each<[string, boolean, string | Error, RegExp | undefined]>([
    ['no swap', true, HEADER, undefined],
    ['swap on', true, `${HEADER}/swapfile file 1048572 0 -2\n`, /running with swap on is not supported: .*"\/swapfile/],
    ['swap on, failSwapOn false', false, `${HEADER}/swapfile file 1048572 0 -2\n`, undefined],
    ['no /proc/swaps', true, new Error('ENOENT'), undefined],
  ])('%s', (_name, failSwapOn, swaps, problem) => {
    const got = swapProblem(failSwapOn, fs(swaps));
    if (problem) expect(got).toMatch(problem);
    else expect(got).toBeUndefined();
  });
});

describe('oomScoreAdj', () => {
  it('is written to /proc/self/oom_score_adj', () => {
    const writes: [string, string][] = [];
    applyOomScoreAdj(-999, silentLogger(), fs(HEADER, writes));
    expect(writes).toEqual([['/proc/self/oom_score_adj', '-999']]);
  });

  it('a failure does not stop the start', () => {
    expect(() => applyOomScoreAdj(-999, silentLogger(), fs(HEADER, [], new Error('EACCES')))).not.toThrow();
  });

  /** A /proc where writing oom_score_adj fails with `code`; CapEff with or without CAP_SYS_RESOURCE (bit 24). */
  const proc = (code: string, capEff: string): ProcFs => ({
    read: (p) => (p === '/proc/self/status' ? `Name:\tnode\nCapEff:\t${capEff}\n` : '0\n'),
    write: () => {
      throw Object.assign(new Error(`${code}: permission denied, write`), { code });
    },
  });
  const logged = (f: ProcFs) => {
    const lines: Record<string, unknown>[] = [];
    applyOomScoreAdj(-999, pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) }), f);
    return lines.map(({ level, msg, err, oomScoreAdj, kept, reason }) => ({ level, msg, err, oomScoreAdj, kept, reason }));
  };

  it.each([
    [
      'root without CAP_SYS_RESOURCE (a sandbox): upstream’s message at info, Go’s error text, the reason and the score kept',
      proc('EACCES', '000001fffeffffff'),
      'lowering oom_score_adj needs CAP_SYS_RESOURCE, which this process does not have',
    ],
    ['with CAP_SYS_RESOURCE the cause is not guessed', proc('EACCES', '000001ffffffffff'), undefined],
  ])('%s', (_name, f, reason) => {
    expect(logged(f)).toEqual([
      {
        level: 30,
        msg: 'Failed to ApplyOOMScoreAdj',
        err: 'write /proc/self/oom_score_adj: permission denied',
        oomScoreAdj: -999,
        kept: 0,
        reason,
      },
    ]);
  });
});
