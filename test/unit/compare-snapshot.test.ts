import { describe, expect, it } from 'vitest';
import { parseSourceArg } from '../../src/compare/collect.js';
import { SourceError } from '../../src/compare/errors.js';
import { formatSnapshot, parseSnapshot, type SourceScrapes } from '../../src/compare/snapshot.js';

const T = Date.parse('2026-11-23T01:00:00.000Z');

describe('snapshots', () => {
  const sources: SourceScrapes[] = [
    {
      name: 'go',
      origin: 'https://127.0.0.1:10250/metrics',
      start: { text: 'a 1\n', timeMs: T },
      end: { text: 'a 2\n', timeMs: T + 60_000 },
    },
    { name: 'ts "x"', origin: 'http://h:1/metrics?x="y"', end: { text: 'b 3', timeMs: T + 61_000 } },
  ];

  it('round-trips sources, phases and times', () => {
    const text = formatSnapshot(sources);
    expect(parseSnapshot(text, 'f.prom', 0, 'f')).toEqual([sources[0], { ...sources[1], end: { text: 'b 3\n', timeMs: T + 61_000 } }]);
  });

  it('a plain exposition is one cumulative source named after the file, dated by its mtime', () => {
    expect(parseSnapshot('a 1\n', '/x/node1.txt', T, 'node1')).toEqual([
      { name: 'node1', origin: '/x/node1.txt', end: { text: 'a 1\n', timeMs: T } },
    ]);
  });

  it.each([
    [
      '# kubelet-ts-compare snapshot name="a" origin="o" phase="middle" time="2026-11-23T01:00:00Z"\na 1\n',
      /f:1: malformed snapshot marker/,
    ],
    [
      'a 1\n# kubelet-ts-compare snapshot name="a" origin="o" phase="end" time="2026-11-23T01:00:00Z"\n',
      /f:1: text before the first snapshot marker/,
    ],
    [
      '# kubelet-ts-compare snapshot name="a" origin="o" phase="start" time="2026-11-23T01:00:00Z"\na 1\n',
      /source "a" has a start section but no end section/,
    ],
  ])('rejects a malformed snapshot %#', (text, message) => {
    expect(() => parseSnapshot(text, 'f', 0, 'f')).toThrow(SourceError);
    expect(() => parseSnapshot(text, 'f', 0, 'f')).toThrow(message);
  });
});

describe('parseSourceArg', () => {
  it.each([
    ['https://10.0.0.1:10250/metrics', { kind: 'url', name: undefined, url: 'https://10.0.0.1:10250/metrics' }],
    ['go=https://h:10250/metrics?x=1', { kind: 'url', name: 'go', url: 'https://h:10250/metrics?x=1' }],
    ['run1.prom', { kind: 'file', name: undefined, path: 'run1.prom' }],
    ['before=a.txt', { kind: 'file', name: 'before', path: 'a.txt' }],
    ['node=a.txt,b.txt', { kind: 'pair', name: 'node', before: 'a.txt', after: 'b.txt' }],
  ])('%s', (arg, want) => expect(parseSourceArg(arg)).toEqual(want));

  it.each([
    ['unix:///run/x.sock', /only http:\/\/ and https:\/\/ URLs/],
    ['a,b,c', /got 3 comma-separated parts/],
    ['x=  ', /empty source/],
  ])('rejects %s', (arg, message) => expect(() => parseSourceArg(arg)).toThrow(message));
});
