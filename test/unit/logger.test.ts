import { describe, expect, it } from 'vitest';
import {
  createLogger,
  formatKlogLine,
  levelForVerbosity,
  setVerbosity,
  v,
  vEnabled,
  verbosityOf,
  type LoggerOptions,
} from '../../src/common/logger.js';

/** 2026-11-21 23:28:32.123456 local time. */
const T = new Date(2026, 10, 21, 23, 28, 32, 123).getTime() + 0.456;

function capture(options: Partial<LoggerOptions> = {}) {
  const lines: string[] = [];
  const logger = createLogger({
    format: 'text',
    verbosity: 0,
    pid: 12345,
    now: () => T,
    destination: { write: (s: string) => void lines.push(s) },
    ...options,
  });
  return { logger, lines };
}

describe('text format', () => {
  it('writes klog-like lines synchronously', () => {
    const { logger, lines } = capture();
    logger.child({ component: 'file-source' }).info({ pod: 'default/web-node1', source: 'file' }, 'Pod added');
    expect(lines).toEqual(['I1121 23:28:32.123456   12345 file-source] "Pod added" pod="default/web-node1" source="file"\n']);
  });

  it.each([
    ['warn', 'W'],
    ['error', 'E'],
    ['fatal', 'F'],
    ['info', 'I'],
  ] as const)('%s has severity %s', (level, letter) => {
    const { logger, lines } = capture();
    logger[level]('x');
    expect(lines[0].startsWith(`${letter}1121 `)).toBe(true);
  });

  it('formats values klog-style: strings quoted, numbers and booleans bare, errors by message', () => {
    const { logger, lines } = capture();
    logger.error({ err: new Error('boom "x"'), n: 3, ok: false, list: ['a'], nested: { a: 1 }, nil: null }, 'Failed');
    expect(lines[0]).toMatch(/kubelet\] "Failed" err="boom \\"x\\"" n=3 ok=false list=\["a"\] nested=\{"a":1\} nil=null\n$/);
  });

  it('prints an error’s causes once: a cause whose message the error already quotes is not appended again', () => {
    const { logger, lines } = capture();
    const inner = new Error('mkdir /x: no space left on device (ENOSPC)');
    const mid = new Error(`cannot create the pod directory: ${inner.message}`, { cause: inner });
    logger.error({ err: new Error(`Unable to mount volumes: ${mid.message}`, { cause: mid }) }, 'Error syncing pod');
    logger.error({ err: new Error('outer', { cause: new Error('inner') }) }, 'chained');
    expect(lines[0]).toContain(
      'err="Unable to mount volumes: cannot create the pod directory: mkdir /x: no space left on device (ENOSPC)"\n',
    );
    expect(lines[1]).toContain('err="outer: inner"\n');
  });

  it('keeps a multi-line message on one line', () => {
    const { logger, lines } = capture();
    logger.info('a\nb');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"a\\nb"');
  });

  it('uses the configured default component and child bindings in order', () => {
    const { logger, lines } = capture({ component: 'agent' });
    logger.child({ pod: 'ns/p' }).info({ attempt: 2 }, 'Sync');
    expect(lines[0]).toMatch(/ agent\] "Sync" pod="ns\/p" attempt=2\n$/);
  });

  it('pads microseconds and the pid like klog', () => {
    expect(formatKlogLine({ level: 30, time: new Date(2026, 0, 2, 3, 4, 5, 6).getTime(), pid: 7, msg: 'm' })).toBe(
      'I0102 03:04:05.006000       7 kubelet] "m"\n',
    );
  });
});

describe('json format', () => {
  it.each<[string, (l: ReturnType<typeof createLogger>) => void, Record<string, unknown>]>([
    [
      'info: v 0',
      (l) => l.child({ component: 'pleg' }).info({ pods: 3 }, 'Relist done'),
      { ts: T / 1000, msg: 'Relist done', v: 0, component: 'pleg', pods: 3 },
    ],
    ['warn: v 0', (l) => l.warn({ pods: 3 }, 'Relist slow'), { ts: T / 1000, msg: 'Relist slow', v: 0, pods: 3 }],
    ['V(3) line: v 3', (l) => v(l, 3).info({ pod: 'a' }, 'Event'), { ts: T / 1000, msg: 'Event', v: 3, pod: 'a' }],
    ['debug: v 4', (l) => l.debug('d'), { ts: T / 1000, msg: 'd', v: 4 }],
    ['error: no v, err as its message', (l) => l.error({ err: new Error('boom') }, 'Failed'), { ts: T / 1000, msg: 'Failed', err: 'boom' }],
    [
      'a key bound twice appears once, the innermost value',
      (l) => l.child({ component: 'kubelet' }).child({ component: 'pod-workers' }).info('x'),
      { ts: T / 1000, msg: 'x', v: 0, component: 'pod-workers' },
    ],
  ])('%s (upstream shape)', (_name, log, expected) => {
    const { logger, lines } = capture({ format: 'json', verbosity: 4 });
    log(logger);
    expect(lines).toHaveLength(1);
    expect(lines[0].match(/"component"/g)?.length ?? 0).toBeLessThanOrEqual(1);
    expect(JSON.parse(lines[0])).toEqual(expected);
  });

  it('uses epoch seconds with sub-second precision by default', () => {
    const lines: string[] = [];
    const logger = createLogger({ format: 'json', verbosity: 0, destination: { write: (s: string) => void lines.push(s) } });
    logger.info('x');
    const record = JSON.parse(lines[0]) as { ts: number };
    expect(Math.abs(record.ts - Date.now() / 1000)).toBeLessThan(60);
  });
});

describe('setVerbosity', () => {
  it('changes the verbosity of the logger and of children made before', () => {
    const { logger, lines } = capture({ verbosity: 0 });
    const child = logger.child({ component: 'c' });
    child.debug('hidden');
    v(child, 2).info('hidden');
    setVerbosity(logger, 4);
    expect(verbosityOf(child)).toBe(4);
    child.debug('shown');
    v(child, 2).info('shown too');
    setVerbosity(child, 0);
    child.debug('hidden again');
    expect(lines.map((l) => l.match(/"([^"]*)"/)?.[1])).toEqual(['shown', 'shown too']);
  });
});

describe('verbosity', () => {
  it.each([
    [0, 'info'],
    [3, 'info'],
    [4, 'debug'],
    [5, 'trace'],
    [10, 'trace'],
  ])('--v=%d maps to pino level %s', (verbosity, level) => {
    expect(levelForVerbosity(verbosity)).toBe(level);
    expect(capture({ verbosity }).logger.level).toBe(level);
  });

  it('gates debug and trace', () => {
    const quiet = capture({ verbosity: 2 });
    quiet.logger.debug('hidden');
    quiet.logger.trace('hidden');
    expect(quiet.lines).toEqual([]);
    expect(quiet.logger.isLevelEnabled('debug')).toBe(false);

    const loud = capture({ verbosity: 4 });
    loud.logger.debug('shown');
    loud.logger.trace('hidden');
    expect(loud.lines).toHaveLength(1);
    expect(loud.lines[0]).toMatch(/^I.*"shown"/);
  });

  it('v(logger, n) gates klog V levels, on children too', () => {
    const { logger, lines } = capture({ verbosity: 2 });
    const child = logger.child({ component: 'pod-workers' });
    expect(vEnabled(child, 2)).toBe(true);
    expect(vEnabled(child, 3)).toBe(false);
    v(child, 2).info('at V(2)');
    v(child, 3).info('at V(3)');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('pod-workers] "at V(2)"');
  });

  it('warnings and errors are never gated', () => {
    const { logger, lines } = capture({ verbosity: 0 });
    logger.warn('w');
    logger.error('e');
    expect(lines).toHaveLength(2);
  });
});
