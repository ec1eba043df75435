/**
 * Room beyond a shared table's fixed slots, for the pods that do not fit a
 * slot: a growable SharedArrayBuffer whose fixed part (header and slots) is
 * followed by extents handed out by a bump pointer in the header.
 *
 * - Any thread may allocate: the pointer moves with Atomics.add, and the
 *   buffer grows (to at least the extent's end) with `grow`, which every
 *   thread's length-tracking views see at once. Two threads growing at once
 *   is fine: a grow to less than the current length fails and is ignored.
 * - Extents are never freed: the tables keep one per slot and reuse it for the
 *   next pod in that slot, so the room used is bounded by the largest pod
 *   each slot has held (at most twice its size).
 * - The buffer reserves `fixed + maxExtentBytes` of address space up front;
 *   only what was grown to is memory.
 */
import { CapacityError } from '../common/errors.js';

/** Default room for extents: address space reserved, not memory. */
export const DEFAULT_EXTENT_BYTES = 256 * 1024 * 1024;

/** A growable buffer of `fixedBytes`, with room for `extentBytes` of extents after them. */
export function createGrowableBuffer(fixedBytes: number, extentBytes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(fixedBytes, { maxByteLength: fixedBytes + extentBytes });
}

/** Rounds `n` up to a power of two, at least `min`. */
export function roomFor(n: number, min: number): number {
  let size = min;
  while (size < n) size *= 2;
  return size;
}

/**
 * Allocates `bytes` (a multiple of 8) after the fixed part; returns the byte
 * offset. `topIndex` is the Int32 index of the header word holding the
 * allocated end (0 = nothing allocated yet; the fixed part's size is then
 * the start). Throws CapacityError naming `what` when the room is used up.
 */
export function allocateExtent(buffer: SharedArrayBuffer, i32: Int32Array, topIndex: number, bytes: number, what: string): number {
  const fixed = fixedBytesOf(buffer, i32, topIndex);
  const max = buffer.growable ? buffer.maxByteLength : buffer.byteLength;
  // The word counts from the fixed part's end; it only moves when the extent fits, so it stays inside Int32.
  let top = Atomics.load(i32, topIndex);
  for (;;) {
    if (fixed + top + bytes > max) {
      throw new CapacityError(
        `${what} needs ${bytes} more bytes of shared memory, and the ${max - fixed} bytes kept for pods larger than a slot are used up`,
      );
    }
    const seen = Atomics.compareExchange(i32, topIndex, top, top + bytes);
    if (seen === top) break;
    top = seen;
  }
  const start = fixed + top;
  const end = start + bytes;
  while (buffer.byteLength < end) {
    try {
      buffer.grow(end);
    } catch (err) {
      if (buffer.byteLength < end) throw err; // not a concurrent grow past `end`
    }
  }
  return start;
}

/** The fixed part's size: recorded by the table in the word after `topIndex`. */
function fixedBytesOf(buffer: SharedArrayBuffer, i32: Int32Array, topIndex: number): number {
  const fixed = Atomics.load(i32, topIndex + 1);
  if (fixed <= 0 || fixed > buffer.byteLength) throw new RangeError(`shared table header: fixed size ${fixed} is not valid`);
  return fixed;
}

/** Records the fixed part's size beside the allocation word; the table's create() calls it once. */
export function initExtents(i32: Int32Array, topIndex: number, fixedBytes: number): void {
  Atomics.store(i32, topIndex, 0);
  Atomics.store(i32, topIndex + 1, fixedBytes);
}
