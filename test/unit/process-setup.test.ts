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
});
