/** The fault table (test/faults/report.ts): the hold column, and an armed fault that never hit is not counted recovered. */
import { expect, it } from 'vitest';
import { summaryRow, type RecordedFault } from '../faults/report.js';
import type { RunRecord } from '../faults/runner.js';

const run = (n: number, extra: Partial<RunRecord>): RunRecord => ({
  run: n,
  runningAtInjection: 10,
  recovered: true,
  recoveryMs: 1000 * n,
  lost: 0,
  duplicates: 0,
  duplicatesSeen: 0,
  healthyRestarted: 0,
  terminatedRestarted: 0,
  startsInterrupted: 0,
  usageOk: true,
  details: [],
  ...extra,
});
const fault = (runs: RunRecord[]): RecordedFault => ({
  id: 'f',
  title: 't',
  runtime: 'sim',
  pods: 10,
  moment: 'start',
  runs,
  date: '2026-11-27T21:00:00.000Z',
  command: 'npm run faults',
  machine: { cpus: 2, loadavg: [1, 1, 1], node: 'v20' },
  sharedMachine: false,
});
const cells = (f: RecordedFault) => summaryRow(f).split(' | ');

it('leaves a run whose armed fault never hit out of the recovered count and the times, and says so', () => {
  const c = cells(
    fault([
      run(1, { holdMs: 5000, brokeAfterFirstPass: 0, hitAfterMs: 200 }),
      run(2, { holdMs: 5000, brokeAfterFirstPass: 1, hitAfterMs: 300 }),
      run(60, { holdMs: 5000, brokeAfterFirstPass: 0, missed: 'never fired' }),
    ]),
  );
  expect(c[2]).toBe('2/3 (1 never hit)');
  expect(c[10]).toBe('1.0 / 2.0');
  expect(c[11]).toBe('5.0 / 1');
});

it('shows records from before the hold as such', () => {
  expect(cells(fault([run(1, {})]))[11]).toBe('no hold');
});
