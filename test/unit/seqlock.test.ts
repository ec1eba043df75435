import { describe, expect, it } from 'vitest';
import { KubeletTsError } from '../../src/common/errors.js';
import { SeqLockArray, seqReadConsistent } from '../../src/shared/seqlock.js';

function locks(count = 4, stride = 2, base = 1): { words: Int32Array; locks: SeqLockArray } {
  const words = new Int32Array(new SharedArrayBuffer(4 * (base + count * stride)));
  return { words, locks: new SeqLockArray(words, base, stride, count) };
}

describe('SeqLockArray', () => {
  it('maps slots to strided words', () => {
    const { locks: l } = locks(3, 4, 2);
    expect([0, 1, 2].map((s) => l.indexOf(s))).toEqual([2, 6, 10]);
    expect(() => l.indexOf(3)).toThrow(RangeError);
    expect(() => l.indexOf(-1)).toThrow(RangeError);
  });

  it('goes odd on writeBegin and even on writeEnd', () => {
    const { words, locks: l } = locks();
    l.writeBegin(1);
    expect(l.sequence(1)).toBe(1);
    expect(words[l.indexOf(1)]).toBe(1);
    l.writeEnd(1);
    expect(l.sequence(1)).toBe(2);
    expect(l.sequence(0)).toBe(0);
  });

  it('throws on a second writer and leaves the first writer intact', () => {
    const { locks: l } = locks();
    l.writeBegin(0);
    expect(() => l.writeBegin(0)).toThrow(/another write was in progress/);
    expect(l.sequence(0)).toBe(1);
    l.writeEnd(0);
    expect(l.sequence(0)).toBe(2);
  });

  it('throws on writeEnd without writeBegin', () => {
    const { locks: l } = locks();
    expect(() => l.writeEnd(0)).toThrow(KubeletTsError);
    expect(l.sequence(0)).toBe(0);
  });

  it('readRetry reports a write that happened after readBegin', () => {
    const { locks: l } = locks();
    const seq = l.readBegin(2);
    expect(l.readRetry(2, seq)).toBe(false);
    l.writeBegin(2);
    expect(l.readRetry(2, seq)).toBe(true);
    l.writeEnd(2);
    expect(l.readRetry(2, seq)).toBe(true);
    expect(l.readRetry(2, l.readBegin(2))).toBe(false);
  });

  it('readConsistent retries until no write overlapped the read', () => {
    const { locks: l } = locks();
    let calls = 0;
    const v = l.readConsistent(0, () => {
      calls++;
      if (calls < 3) {
        l.writeBegin(0);
        l.writeEnd(0);
      }
      return calls;
    });
    expect(v).toBe(3);
    expect(calls).toBe(3);
  });

  it('readConsistent retries a throwing read when the sequence moved, and rethrows otherwise', () => {
    const { locks: l } = locks();
    let calls = 0;
    expect(
      l.readConsistent(0, () => {
        calls++;
        if (calls === 1) {
          l.writeBegin(0);
          l.writeEnd(0);
          throw new RangeError('torn');
        }
        return 'ok';
      }),
    ).toBe('ok');
    expect(() =>
      l.readConsistent(0, () => {
        throw new RangeError('real');
      }),
    ).toThrow('real');
  });

  it('readConsistent gives up after the retry bound with a clear error', () => {
    const { words, locks: l } = locks();
    expect(() =>
      seqReadConsistent(
        words,
        l.indexOf(0),
        () => {
          l.writeBegin(0);
          l.writeEnd(0);
        },
        10,
        'slot-0',
      ),
    ).toThrow(/seqlock slot-0: no consistent read after 10 attempts/);
  });
});
