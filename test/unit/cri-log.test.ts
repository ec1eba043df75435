import { describe, expect, it } from 'vitest';
import { LogQueryError, logReadOptions, parseCriLogLine, parsePodLogQuery, parseRfc3339Ns } from '../../src/main/logs/cri-log.js';

describe('parseCriLogLine (upstream parseCRILog)', () => {
  it('full and partial lines', () => {
    const full = parseCriLogLine(Buffer.from('2026-11-21T22:35:44.527566154Z stdout F hi there\n'));
    expect({ ...full, content: full.content.toString() }).toEqual({
      timestamp: '2026-11-21T22:35:44.527566154Z',
      timeNs: 1795300544527566154n,
      stream: 'stdout',
      partial: false,
      content: 'hi there\n',
    });
    const part = parseCriLogLine(Buffer.from('2026-11-21T22:35:44Z stderr P:x abc\n'));
    expect([part.stream, part.partial, part.content.toString()]).toEqual(['stderr', true, 'abc']);
  });
  it.each([
    ['nospace', 'timestamp is not found'],
    ['yesterday stdout F x', 'unexpected timestamp format "yesterday"'],
    ['2026-11-21T22:35:44Z stdout', 'stream type is not found'],
    ['2026-11-21T22:35:44Z stdin F x', 'unexpected stream type "stdin"'],
    ['2026-11-21T22:35:44Z stdout F', 'log tag is not found'],
  ])('%s → %s', (line, err) => expect(() => parseCriLogLine(Buffer.from(line))).toThrow(err));
  it('parses RFC3339 with offsets and fractions to ns', () => {
    expect(parseRfc3339Ns('1970-01-01T00:00:01.5Z')).toBe(1_500_000_000n);
    expect(parseRfc3339Ns('1970-01-01T01:00:00+01:00')).toBe(0n);
    expect(parseRfc3339Ns('1970-01-01 00:00:00')).toBeUndefined();
  });
});

describe('PodLogOptions query (upstream decode + ValidatePodLogOptions)', () => {
  const q = (s: string) => parsePodLogQuery(new URLSearchParams(s));
  it('decodes', () => {
    expect(q('follow=true&previous=1&timestamps=T&tailLines=5&limitBytes=10&sinceSeconds=60')).toEqual({
      follow: true,
      previous: true,
      timestamps: true,
      tailLines: 5,
      limitBytes: 10,
      sinceSeconds: 60,
    });
    expect(q('tail=3')).toMatchObject({ tailLines: 3 });
    expect(q('tail=all&tailLines=3')).not.toHaveProperty('tailLines');
  });
  it.each([
    ['follow=yes', 400],
    ['tailLines=x', 400],
    ['sinceSeconds=abc', 400],
    ['sinceTime=yesterday', 400],
    ['tailLines=-1', 422],
    ['limitBytes=0', 422],
    ['sinceSeconds=0', 422],
    ['sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z', 422],
  ])('%s → %s', (s, status) => {
    const err = (() => {
      try {
        q(s);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(LogQueryError);
    expect((err as LogQueryError).status).toBe(status);
  });
  it('since = the later of sinceSeconds and sinceTime; defaults -1', () => {
    expect(logReadOptions({ follow: false, previous: false, timestamps: false }, 0)).toEqual({
      tail: -1,
      bytes: -1,
      sinceNs: 0n,
      follow: false,
      timestamps: false,
    });
    expect(logReadOptions({ follow: false, previous: false, timestamps: false, sinceSeconds: 10 }, 60_000).sinceNs).toBe(50_000_000_000n);
  });
});

describe('int64 query values (upstream strconv.ParseInt)', () => {
  const q = (s: string) => parsePodLogQuery(new URLSearchParams(s));
  const statusOf = (s: string) => {
    try {
      q(s);
    } catch (e) {
      return e instanceof LogQueryError ? [e.status, e.message] : e;
    }
    return 'decoded';
  };
  const decodeFailure = [400, '{"message": "Unable to decode query."}'];
  it.each([
    `sinceSeconds=${'9'.repeat(400)}`,
    `limitBytes=${'1'.repeat(27)}`,
    `tailLines=${'1'.repeat(27)}`,
    `tail=${'1'.repeat(27)}`,
    'tailLines=9223372036854775808',
    'limitBytes=-9223372036854775809',
    `sinceSeconds=-${'9'.repeat(400)}`,
  ])('%s is out of int64 range → 400 Unable to decode query.', (s) => expect(statusOf(s)).toEqual(decodeFailure));
  it('accepts the int64 bounds (signs and leading zeros as ParseInt does)', () => {
    expect(statusOf('tailLines=9223372036854775807&limitBytes=%2B9223372036854775807&sinceSeconds=0009223372036854775807')).toBe('decoded');
    expect(statusOf('tailLines=-9223372036854775808')).toEqual([422, '{"message": "Invalid request."}']);
    expect(q(`tailLines=${'0'.repeat(30)}7`).tailLines).toBe(7);
    expect(statusOf('limitBytes=+5')).toEqual(decodeFailure);
  });
  it('values past 2^53 mean no practical limit; a since before the epoch means from the beginning', () => {
    const base = { follow: false, previous: false, timestamps: false };
    const opts = logReadOptions(
      q('tailLines=9007199254740993&limitBytes=9223372036854775807&sinceSeconds=1000000000000000'),
      1_800_000_000_000,
    );
    expect(opts).toEqual({ tail: Number.MAX_SAFE_INTEGER, bytes: Number.MAX_SAFE_INTEGER, sinceNs: 0n, follow: false, timestamps: false });
    expect(logReadOptions(q('sinceSeconds=9223372036854775807'), 1_800_000_000_000).sinceNs).toBe(0n);
    expect(logReadOptions({ ...base, sinceSeconds: Number.POSITIVE_INFINITY, tailLines: 1e300, limitBytes: 1e300 }, 1_000)).toMatchObject({
      tail: Number.MAX_SAFE_INTEGER,
      bytes: Number.MAX_SAFE_INTEGER,
      sinceNs: 0n,
    });
    expect(logReadOptions({ ...base, sinceSeconds: 1_800_000_000 }, 1_800_000_000_000).sinceNs).toBe(0n);
    expect(logReadOptions({ ...base, sinceSeconds: 1 }, 1_800_000_000_000.5).sinceNs).toBe(1_799_999_999_000_000_000n);
  });
});
