/**
 * Sequence locks over Int32 words in a SharedArrayBuffer, after Linux
 * include/linux/seqlock.h.
 *
 * Contract:
 * - One writer per slot at a time. The caller guarantees it (e.g. one
 *   inspection per pod in flight); `writeBegin` throws if it finds the word
 *   already odd, which can only mean a second writer or a writer that died
 *   between `writeBegin` and `writeEnd`.
 * - Readers never block writers. A reader takes `readBegin` (waits while the
 *   word is odd), copies what it needs, then calls `readRetry`; if the word
 *   moved, everything read in between is discarded and the read is repeated.
 * - Everything a reader does between `readBegin` and `readRetry` must be
 *   side-effect free and must tolerate garbage (torn) bytes: it may throw,
 *   and `readConsistent` treats a throw as "retry" when the sequence moved.
 *
 * Memory model: the sequence word is only touched with Atomics (sequentially
 * consistent); the protected data is read and written with plain typed-array
 * or DataView accesses. ECMAScript defines racy plain reads as yielding some
 * value (never undefined behaviour), and the sequence re-check discards them.
 */
import { KubeletTsError } from '../common/errors.js';

/** Default bound on consistent-read attempts before `readConsistent` gives up. */
export const DEFAULT_MAX_READ_RETRIES = 1_000_000;
/** Spins on an odd word before a reader starts sleeping 1 ms at a time (writer preempted). */
export const SPINS_BEFORE_SLEEP = 1024;
/** 1 ms sleeps a reader tolerates on one odd word before declaring the writer dead. */
export const MAX_ODD_SLEEPS = 5000;

/**
 * A set of seqlock words: word `i` lives at Int32 index `baseIndex + i * strideWords`
 * of `words`. Several instances may view the same buffer; state lives only in
 * shared memory.
 */
export class SeqLockArray {
  constructor(
    private readonly words: Int32Array,
    private readonly baseIndex: number,
    private readonly strideWords: number,
    readonly count: number,
  ) {}

  /** Int32 index of the word for `slot`. */
  indexOf(slot: number): number {
    if (!(slot >= 0 && slot < this.count && Number.isInteger(slot))) {
      throw new RangeError(`seqlock slot ${slot} out of range [0, ${this.count})`);
    }
    return this.baseIndex + slot * this.strideWords;
  }

  /** Writer only. Makes the word odd; throws if it already was (two writers). */
  writeBegin(slot: number): void {
    seqWriteBegin(this.words, this.indexOf(slot), slot);
  }

  /** Writer only. Makes the word even again, publishing the writes made since `writeBegin`. */
  writeEnd(slot: number): void {
    seqWriteEnd(this.words, this.indexOf(slot), slot);
  }

  /** Any thread. Returns an even sequence, waiting while a write is in progress. */
  readBegin(slot: number): number {
    return seqReadBegin(this.words, this.indexOf(slot), slot);
  }

  /** Any thread. True if a write began or ended since `readBegin` returned `seq`. */
  readRetry(slot: number, seq: number): boolean {
    return Atomics.load(this.words, this.indexOf(slot)) !== seq;
  }

  /** Any thread. Runs `fn` until it completes without a concurrent write. */
  readConsistent<T>(slot: number, fn: () => T, maxRetries = DEFAULT_MAX_READ_RETRIES): T {
    return seqReadConsistent(this.words, this.indexOf(slot), fn, maxRetries, slot);
  }

  /** Any thread. Current raw sequence (odd while writing); for diagnostics and tests. */
  sequence(slot: number): number {
    return Atomics.load(this.words, this.indexOf(slot));
  }
}

/** Writer only: see `SeqLockArray.writeBegin`. `label` names the slot in errors. */
export function seqWriteBegin(words: Int32Array, index: number, label: number | string = index): void {
  const before = Atomics.add(words, index, 1);
  if ((before & 1) !== 0) {
    Atomics.sub(words, index, 1);
    throw new KubeletTsError(
      `seqlock ${label}: write began while another write was in progress (sequence ${before}); ` +
        'each slot allows one writer at a time; check that only one task writes this slot',
    );
  }
}

/** How long `seqWriteAcquire` waits for another thread's write to end before declaring it dead. */
export const WRITE_ACQUIRE_MAX_WAIT_MS = 20;

/**
 * Writer, for slots that two threads may write (e.g. a PLEG inspection and
 * the evented PLEG's event writer): like `seqWriteBegin`, but when another
 * write is in progress it waits for it to end (critical sections are a copy of
 * a few KiB) instead of throwing at once. Throws, as `seqWriteBegin` does, if
 * the word stays odd for `maxWaitMs` (the other writer died mid-write, or the
 * calling thread itself holds the slot).
 */
export function seqWriteAcquire(
  words: Int32Array,
  index: number,
  label: number | string = index,
  maxWaitMs = WRITE_ACQUIRE_MAX_WAIT_MS,
): void {
  let waits = 0;
  for (let spins = 0; ; spins++) {
    const seq = Atomics.load(words, index);
    if ((seq & 1) === 0) {
      if (Atomics.compareExchange(words, index, seq, seq + 1) === seq) return;
      continue;
    }
    if (spins < SPINS_BEFORE_SLEEP) continue;
    if (waits++ >= maxWaitMs) {
      throw new KubeletTsError(
        `seqlock ${label}: write began while another write was in progress (sequence ${seq}) for over ${maxWaitMs} ms; ` +
          'the other writer died mid-write or this thread already holds the slot',
      );
    }
    Atomics.wait(words, index, seq, 1);
  }
}

/** Writer only: see `SeqLockArray.writeEnd`. */
export function seqWriteEnd(words: Int32Array, index: number, label: number | string = index): void {
  const before = Atomics.add(words, index, 1);
  if ((before & 1) === 0) {
    Atomics.sub(words, index, 1);
    throw new KubeletTsError(`seqlock ${label}: writeEnd without writeBegin (sequence ${before} is even)`);
  }
}

/** Any thread: see `SeqLockArray.readBegin`. Throws if the word stays odd ~5 s. */
export function seqReadBegin(words: Int32Array, index: number, label: number | string = index): number {
  let seq = Atomics.load(words, index);
  if ((seq & 1) === 0) return seq;
  for (let spins = 0; spins < SPINS_BEFORE_SLEEP; spins++) {
    seq = Atomics.load(words, index);
    if ((seq & 1) === 0) return seq;
  }
  for (let sleeps = 0; sleeps < MAX_ODD_SLEEPS; sleeps++) {
    // Writers do not notify; the 1 ms timeout bounds the wait. Returns at once if the word moved.
    Atomics.wait(words, index, seq, 1);
    seq = Atomics.load(words, index);
    if ((seq & 1) === 0) return seq;
  }
  throw new KubeletTsError(
    `seqlock ${label}: a write has been in progress for over ${MAX_ODD_SLEEPS} ms (sequence ${seq}); ` +
      'the writer probably died between writeBegin and writeEnd; recreate the shared structure',
  );
}

/** Any thread: see `SeqLockArray.readConsistent`. */
export function seqReadConsistent<T>(
  words: Int32Array,
  index: number,
  fn: () => T,
  maxRetries = DEFAULT_MAX_READ_RETRIES,
  label: number | string = index,
): T {
  for (let attempt = 0; attempt < maxRetries; attempt++) {
    const seq = seqReadBegin(words, index, label);
    let result: T;
    try {
      result = fn();
    } catch (err) {
      if (Atomics.load(words, index) !== seq) continue;
      throw err;
    }
    if (Atomics.load(words, index) === seq) return result;
  }
  throw new KubeletTsError(
    `seqlock ${label}: no consistent read after ${maxRetries} attempts; ` +
      'the slot is being rewritten continuously (a writer loop without pause?)',
  );
}
