import { describe, expect, it } from 'vitest';
import { CauseLog } from '../../src/common/cause-log.js';
import { createLogger } from '../../src/common/logger.js';
import { FakeClock } from '../fakes/fake-clock.js';

function setup(verbosity = 0) {
  const records: Record<string, unknown>[] = [];
  const logger = createLogger({
    format: 'json',
    verbosity,
    destination: { write: (l: string) => void records.push(JSON.parse(l) as Record<string, unknown>) },
  });
  const clock = new FakeClock();
  return { records, clock, log: new CauseLog(logger, clock, 30_000) };
}

describe('CauseLog', () => {
  it('logs the first failure of a cause, counts the rest, and logs again after the interval with the count', () => {
    const { records, clock, log } = setup();
    for (let i = 0; i < 50; i++) log.failure('disk full', `pod-${i}`, 'Error syncing pod, skipping', { podUID: `pod-${i}` });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ cause: 'disk full', podUID: 'pod-0', failing: 1 });
    clock.step(30_000);
    log.failure('disk full', 'pod-7', 'Error syncing pod, skipping', { podUID: 'pod-7' });
    expect(records).toHaveLength(2);
    expect(records[1]).toMatchObject({ cause: 'disk full', failing: 50, suppressedSince: 49 });
  });

  it('keeps causes apart: a second cause is logged at once', () => {
    const { records, log } = setup();
    log.failure('root dir full', 'a', 'm');
    log.failure('log dir read-only', 'b', 'm');
    log.failure('root dir full', 'c', 'm');
    expect(records.map((r) => r.cause)).toEqual(['root dir full', 'log dir read-only']);
    expect(log.active()).toEqual(
      new Map([
        ['root dir full', 2],
        ['log dir read-only', 1],
      ]),
    );
  });

  it('says once that a cause cleared when its last failing subject succeeds; a success of another subject says nothing', () => {
    const { records, log } = setup();
    log.failure('disk full', 'a', 'm');
    log.failure('disk full', 'b', 'm');
    log.success('unrelated');
    log.success('a');
    expect(records).toHaveLength(1);
    log.success('b');
    expect(records[1]).toMatchObject({ msg: 'A failure cause has cleared', cause: 'disk full', affected: 2, suppressed: 1 });
    expect(log.active().size).toBe(0);
    // Seen again after clearing: logged at once.
    log.failure('disk full', 'a', 'm');
    expect(records).toHaveLength(3);
  });

  it('a subject failing with another cause still counts for the first until it succeeds', () => {
    const { records, log } = setup();
    log.failure('log dir full', 'a', 'm');
    log.failure('root dir full', 'a', 'm');
    expect(records.map((r) => r.cause)).toEqual(['log dir full', 'root dir full']);
    expect(log.active()).toEqual(
      new Map([
        ['log dir full', 1],
        ['root dir full', 1],
      ]),
    );
    log.success('a');
    expect(records.slice(2).map((r) => [r.msg, r.cause])).toEqual([
      ['A failure cause has cleared', 'log dir full'],
      ['A failure cause has cleared', 'root dir full'],
    ]);
  });

  it('each counted failure is at V(4)', () => {
    const { records, log } = setup(4);
    log.failure('disk full', 'a', 'm', { podUID: 'a' });
    log.failure('disk full', 'b', 'm', { podUID: 'b' });
    expect(records.map((r) => [r.podUID, r.v])).toEqual([
      ['a', undefined],
      ['b', 4],
    ]);
  });
});
