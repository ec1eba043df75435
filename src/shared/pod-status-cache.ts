/**
 * The pod status cache in a SharedArrayBuffer: upstream kubecontainer.Cache
 * (pkg/kubelet/container/cache.go) as fixed slots readable from any thread
 * without a message copy.
 *
 * Upstream semantics kept here:
 * - Every entry is at least as new as the global timestamp (`UpdateTime`),
 *   which the PLEG advances after a relist's inspections all finished; an
 *   entry may be newer than it. The global timestamp is unset (nil upstream,
 *   NaN here) until the first relist completes.
 * - `GetNewerThan(uid, t)` is ready when the entry's own timestamp is after t
 *   OR the global timestamp is after t (strictly after, `time.After`); a pod
 *   with no entry is ready (as an empty status) once the global timestamp is
 *   after t. `isNewerThan` / `isGlobalNewerThan` answer those questions; the
 *   blocking wait lives with the caller (poll on `generation()` or on PLEG).
 *
 * Ownership:
 * - Slot allocation (`allocate`, `free`) is owned by ONE thread, the instance
 *   made by `create` (the main thread) or by `attach(sab, { owner: true })`
 *   after a handoff. It keeps a uid→slot Map in its JS memory and writes the
 *   uid into the slot so readers elsewhere can check they read the pod they
 *   meant.
 * - `write(slot, …)` may run on any thread, between `allocate` and `free` of
 *   that pod. Two threads may write one slot (an inspection task and the
 *   evented PLEG's event writer): the second waits for the first's write to
 *   end (`seqWriteAcquire`); a write to a slot that was freed meanwhile fails.
 * - `read*`, `isNewerThan`, `getGlobalTimestamp` may run on any thread.
 * - `setGlobalTimestamp` may run on any thread (the relist loop's worker ends a
 *   quiet relist with it, the main thread a relist it inspected for, and the
 *   evented PLEG moves it every 2 s); a write waits for another's to end.
 *
 * Capacity: the caller derives it from maxPods, normally
 * `capacityForMaxPods(maxPods)` = 2 × maxPods, so terminating pods that still
 * have runtime state can coexist with newly admitted ones during churn.
 *
 * Size: a slot holds a status of up to `slotBytes` minus its header in place.
 * A larger one (a pod with many containers) goes to the slot's extent after
 * the slots (growable-arena.ts), which the writer allocates, under the slot's
 * write lock, when the slot has none or a smaller one; the slot keeps it for
 * later writes and pods. Readers find it through the slot header, under the
 * same seqlock as the status.
 */
import { rebuildSlotIndex } from './slot-index.js';
import { CapacityError, KubeletTsError } from '../common/errors.js';
import { allocateExtent, createGrowableBuffer, DEFAULT_EXTENT_BYTES, initExtents, roomFor } from './growable-arena.js';
import type { PodStatus } from '../runtime/types.js';
import { decodePodStatus, encodePodStatus } from './pod-status-codec.js';
import { SeqLockArray, seqReadConsistent, seqWriteAcquire, seqWriteEnd } from './seqlock.js';

export const POD_STATUS_CACHE_MAGIC = 0x4b505343; // 'KPSC'
/** Bumped on any change to the header or slot layout below. */
export const POD_STATUS_CACHE_VERSION = 2;

// Header, byte offsets.
export const H_MAGIC = 0; // i32
export const H_VERSION = 4; // i32
export const H_CAPACITY = 8; // i32
export const H_SLOT_BYTES = 12; // i32
export const H_GLOBAL_SEQ = 16; // i32 seqlock guarding H_GLOBAL_TS
export const H_GENERATION = 20; // i32, Atomics.add on every write, free and setGlobalTimestamp
export const H_GLOBAL_TS = 24; // f64 ms since the epoch; NaN = never set
export const H_EXT_TOP = 32; // i32 bytes of extents allocated; H_EXT_TOP + 4: the fixed part's size (growable-arena.ts)
export const HEADER_BYTES = 64;

// Slot, byte offsets from the slot start. A slot is `slotBytes` long, 8-aligned.
export const S_SEQ = 0; // i32 seqlock guarding everything below
export const S_STATE = 4; // i32 SLOT_FREE | SLOT_USED
export const S_TIMESTAMP = 8; // f64 ms, the status timestamp; NaN = no status yet
export const S_LENGTH = 16; // u32 encoded status length; 0 = no status yet
export const S_UID_LENGTH = 20; // u32 uid UTF-8 length
export const S_UID = 24; // UID_BYTES of uid
export const UID_BYTES = 64;
export const S_EXT_OFFSET = 88; // u32 byte offset of the slot's extent; 0 = none. Kept across writes and pods.
export const S_EXT_BYTES = 92; // u32 the extent's size
export const SLOT_HEADER_BYTES = 96; // the encoded status follows, when it fits (else it is in the extent)

export const SLOT_FREE = 0;
export const SLOT_USED = 1;

export const DEFAULT_SLOT_BYTES = 16 * 1024;
const MIN_SLOT_BYTES = 256;
/** Smallest extent. */
const MIN_EXTENT_BYTES = 64 * 1024;
/** No encoded status is larger (the codec's own limits are 65535 containers and strings of 64 KiB). */
const MAX_STATUS_BYTES = 256 * 1024 * 1024;

export interface PodStatusCacheOptions {
  /** Number of slots; see `capacityForMaxPods`. */
  capacity: number;
  /** Bytes per slot including the 96-byte slot header; multiple of 8. Default 16 KiB. */
  slotBytes?: number;
  /** Room for the extents of statuses larger than a slot (address space, grown into as needed). */
  extentBytes?: number;
}

/** The slot count to create for a node admitting `maxPods` pods: 2× for churn headroom. */
export function capacityForMaxPods(maxPods: number): number {
  return maxPods * 2;
}

/** SharedArrayBuffer size for `capacity` slots of `slotBytes` (the fixed part; extents come after it). */
export function bytesFor(capacity: number, slotBytes = DEFAULT_SLOT_BYTES): number {
  return HEADER_BYTES + capacity * slotBytes;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

export class PodStatusCache {
  /** Owner only: uid → slot. */
  private readonly index = new Map<string, number>();
  private readonly freeSlots: number[] = [];
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly view: DataView;
  private readonly u8: Uint8Array;
  private readonly locks: SeqLockArray;
  /** Private (non-shared) scratch: encode target and read snapshot; grows for statuses larger than a slot. */
  private scratch: Uint8Array;
  /** The largest status a slot holds in place. */
  private readonly inPlace: number;
  private readonly uidScratch = new Uint8Array(UID_BYTES * 3);
  readonly capacity: number;
  readonly slotBytes: number;

  private constructor(
    readonly buffer: SharedArrayBuffer,
    private readonly owner: boolean,
  ) {
    this.i32 = new Int32Array(buffer);
    this.f64 = new Float64Array(buffer);
    this.view = new DataView(buffer);
    this.u8 = new Uint8Array(buffer);
    this.capacity = this.view.getInt32(H_CAPACITY, true);
    this.slotBytes = this.view.getInt32(H_SLOT_BYTES, true);
    this.locks = new SeqLockArray(this.i32, HEADER_BYTES / 4 + S_SEQ / 4, this.slotBytes / 4, this.capacity);
    this.inPlace = this.slotBytes - SLOT_HEADER_BYTES;
    this.scratch = new Uint8Array(this.inPlace);
  }

  /** Main thread: a new cache; this instance owns slot allocation. */
  static create(opts: PodStatusCacheOptions): PodStatusCache {
    const slotBytes = opts.slotBytes ?? DEFAULT_SLOT_BYTES;
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1) {
      throw new KubeletTsError(`pod status cache capacity must be a positive integer, got ${opts.capacity}`);
    }
    if (!Number.isInteger(slotBytes) || slotBytes % 8 !== 0 || slotBytes < MIN_SLOT_BYTES) {
      throw new KubeletTsError(`pod status cache slotBytes must be a multiple of 8 and >= ${MIN_SLOT_BYTES}, got ${slotBytes}`);
    }
    const fixed = bytesFor(opts.capacity, slotBytes);
    const sab = createGrowableBuffer(fixed, opts.extentBytes ?? DEFAULT_EXTENT_BYTES);
    initExtents(new Int32Array(sab), H_EXT_TOP / 4, fixed);
    const view = new DataView(sab);
    view.setInt32(H_MAGIC, POD_STATUS_CACHE_MAGIC, true);
    view.setInt32(H_VERSION, POD_STATUS_CACHE_VERSION, true);
    view.setInt32(H_CAPACITY, opts.capacity, true);
    view.setInt32(H_SLOT_BYTES, slotBytes, true);
    view.setFloat64(H_GLOBAL_TS, NaN, true);
    const cache = new PodStatusCache(sab, true);
    for (let s = opts.capacity - 1; s >= 0; s--) cache.freeSlots.push(s);
    return cache;
  }

  /**
   * Any thread: a view of an existing cache. With `owner: true` the instance
   * takes over allocation (after the previous owner stopped) and rebuilds the
   * uid→slot index from the slots.
   */
  static attach(sab: SharedArrayBuffer, opts: { owner?: boolean } = {}): PodStatusCache {
    const view = new DataView(sab);
    if (sab.byteLength < HEADER_BYTES || view.getInt32(H_MAGIC, true) !== POD_STATUS_CACHE_MAGIC) {
      throw new KubeletTsError('buffer is not a pod status cache (bad magic)');
    }
    const version = view.getInt32(H_VERSION, true);
    if (version !== POD_STATUS_CACHE_VERSION) {
      throw new KubeletTsError(
        `pod status cache layout version ${version}, this build expects ${POD_STATUS_CACHE_VERSION}; ` +
          'main thread and workers run different builds',
      );
    }
    const expected = bytesFor(view.getInt32(H_CAPACITY, true), view.getInt32(H_SLOT_BYTES, true));
    if (sab.byteLength < expected || view.getInt32(H_EXT_TOP + 4, true) !== expected) {
      throw new KubeletTsError(`pod status cache buffer is ${sab.byteLength} bytes, header says ${expected} and more`);
    }
    const cache = new PodStatusCache(sab, opts.owner === true);
    if (cache.owner) cache.rebuildIndex();
    return cache;
  }

  private rebuildIndex(): void {
    rebuildSlotIndex(this.capacity, (s) => this.uidAt(s), this.index, this.freeSlots);
  }

  private base(slot: number): number {
    return this.locks.indexOf(slot) * 4 - S_SEQ;
  }

  private requireOwner(op: string): void {
    if (!this.owner) {
      throw new KubeletTsError(`pod status cache: ${op} is only allowed on the owning thread (create or attach with owner)`);
    }
  }

  /** Owner only. The slot for `uid`, allocating one if needed. Throws CapacityError when full. */
  allocate(uid: string): number {
    this.requireOwner('allocate');
    const existing = this.index.get(uid);
    if (existing !== undefined) return existing;
    const uidLen = encoder.encodeInto(uid, this.uidScratch).written;
    if (uidLen > UID_BYTES || uidLen === 0) {
      throw new CapacityError(`pod uid ${JSON.stringify(uid)} is ${uidLen} UTF-8 bytes; cache slots hold 1..${UID_BYTES}`);
    }
    const slot = this.freeSlots.pop();
    if (slot === undefined) {
      throw new CapacityError(
        `pod status cache is full (capacity ${this.capacity} slots) allocating pod ${uid}; ` +
          'capacity should be at least capacityForMaxPods(maxPods); pods are not being freed?',
      );
    }
    const b = this.base(slot);
    this.locks.writeBegin(slot);
    this.view.setInt32(b + S_STATE, SLOT_USED, true);
    this.view.setFloat64(b + S_TIMESTAMP, NaN, true);
    this.view.setUint32(b + S_LENGTH, 0, true);
    this.view.setUint32(b + S_UID_LENGTH, uidLen, true);
    this.u8.set(this.uidScratch.subarray(0, uidLen), b + S_UID);
    this.locks.writeEnd(slot);
    this.index.set(uid, slot);
    return slot;
  }

  /** Owner only. Releases the slot of `uid` (no-op if none). No write to it may be in flight. */
  free(uid: string): void {
    this.requireOwner('free');
    const slot = this.index.get(uid);
    if (slot === undefined) return;
    const b = this.base(slot);
    seqWriteAcquire(this.i32, (b + S_SEQ) / 4, slot);
    this.view.setInt32(b + S_STATE, SLOT_FREE, true);
    this.view.setUint32(b + S_LENGTH, 0, true);
    this.view.setUint32(b + S_UID_LENGTH, 0, true);
    this.view.setFloat64(b + S_TIMESTAMP, NaN, true);
    this.locks.writeEnd(slot);
    this.index.delete(uid);
    this.freeSlots.push(slot);
    Atomics.add(this.i32, H_GENERATION / 4, 1);
  }

  /**
   * The slot of `uid`. Owner: O(1) from its index. Other threads: a scan of
   * the slots' uids, O(capacity); prefer passing slot numbers in task messages.
   */
  slotOf(uid: string): number | undefined {
    if (this.owner) return this.index.get(uid);
    for (let s = 0; s < this.capacity; s++) if (this.uidAt(s) === uid) return s;
    return undefined;
  }

  /** Owner: number of allocated slots. */
  get size(): number {
    this.requireOwner('size');
    return this.index.size;
  }

  /** Any thread. The uid written in `slot`, or undefined if the slot is free. */
  uidAt(slot: number): string | undefined {
    const b = this.base(slot);
    return this.locks.readConsistent(slot, () => {
      if (this.view.getInt32(b + S_STATE, true) !== SLOT_USED) return undefined;
      const n = Math.min(this.view.getUint32(b + S_UID_LENGTH, true), UID_BYTES);
      return decoder.decode(this.u8.slice(b + S_UID, b + S_UID + n));
    });
  }

  /**
   * Encodes `status` and publishes it with its timestamp. Two threads may
   * write one slot (the later waits for the earlier, see `seqWriteAcquire`).
   * With `ifNotOlder`, a status older than the slot's is not written (upstream
   * cache.Set with the evented PLEG) and false is returned; with
   * `ifNoNewerThan`, nothing is written (false) when the slot's status is newer
   * than that time (a writer whose status derives from a read at that time
   * must not replace one observed since). Both are checked under the write
   * lock. Throws
   * CapacityError if it does not fit the slot (the slot keeps its previous
   * status), KubeletTsError if the slot is free or holds another pod.
   */
  write(slot: number, status: PodStatus, options: { ifNotOlder?: boolean; ifNoNewerThan?: number } = {}): boolean {
    const len = this.encode(status);
    const b = this.base(slot);
    const uidLen = encoder.encodeInto(status.uid, this.uidScratch).written;
    const seqIndex = (b + S_SEQ) / 4;
    seqWriteAcquire(this.i32, seqIndex, slot);
    if (!this.slotHoldsUid(b, this.uidScratch, uidLen)) {
      Atomics.sub(this.i32, seqIndex, 1);
      throw new KubeletTsError(`pod status cache slot ${slot} is free or allocated to another pod; cannot write pod ${status.uid}`);
    }
    const current = this.view.getFloat64(b + S_TIMESTAMP, true);
    if ((options.ifNotOlder && current > status.timestamp) || (options.ifNoNewerThan !== undefined && current > options.ifNoNewerThan)) {
      Atomics.sub(this.i32, seqIndex, 1); // nothing written: the sequence goes back, readers need not retry
      return false;
    }
    let at = b + SLOT_HEADER_BYTES;
    if (len > this.inPlace) {
      try {
        at = this.extentFor(b, len, status.uid);
      } catch (err) {
        Atomics.sub(this.i32, seqIndex, 1); // nothing written
        throw err;
      }
    }
    this.view.setUint32(b + S_LENGTH, len, true);
    this.view.setFloat64(b + S_TIMESTAMP, status.timestamp, true);
    this.u8.set(this.scratch.subarray(0, len), at);
    seqWriteEnd(this.i32, seqIndex, slot);
    Atomics.add(this.i32, H_GENERATION / 4, 1);
    return true;
  }

  /** Encodes into the scratch, growing it (up to MAX_STATUS_BYTES) while the status does not fit; returns the length. */
  private encode(status: PodStatus): number {
    for (;;) {
      try {
        return encodePodStatus(status, this.scratch);
      } catch (err) {
        if (!(err instanceof CapacityError) || this.scratch.byteLength >= MAX_STATUS_BYTES) throw err;
        this.scratch = new Uint8Array(Math.min(MAX_STATUS_BYTES, roomFor(this.scratch.byteLength * 2, MIN_EXTENT_BYTES)));
      }
    }
  }

  /** Under the slot's write lock: the byte offset of an extent of at least `len` bytes for the slot at `b`. */
  private extentFor(b: number, len: number, uid: string): number {
    if (this.view.getUint32(b + S_EXT_BYTES, true) >= len) return this.view.getUint32(b + S_EXT_OFFSET, true);
    const bytes = roomFor(len, MIN_EXTENT_BYTES);
    const at = allocateExtent(this.buffer, this.i32, H_EXT_TOP / 4, bytes, `the status of pod ${uid} (${len} bytes encoded)`);
    this.view.setUint32(b + S_EXT_OFFSET, at, true);
    this.view.setUint32(b + S_EXT_BYTES, bytes, true);
    return at;
  }

  /**
   * Owner only, and only when the thread that was writing `slot` died (no
   * writer can be active): if the sequence was left odd, drops the possibly
   * torn status (the pod reads as "no status yet") and makes it even again.
   */
  recoverSlotAfterWriterCrash(slot: number): void {
    this.requireOwner('recoverSlotAfterWriterCrash');
    const b = this.base(slot);
    const seqIndex = (b + S_SEQ) / 4;
    if ((Atomics.load(this.i32, seqIndex) & 1) === 0) return;
    this.view.setUint32(b + S_LENGTH, 0, true);
    this.view.setFloat64(b + S_TIMESTAMP, Number.NaN, true);
    Atomics.add(this.i32, seqIndex, 1);
  }

  /** Owner only, when a thread that may have been setting the global timestamp died: an odd sequence is made even. */
  recoverGlobalAfterWriterCrash(): void {
    this.requireOwner('recoverGlobalAfterWriterCrash');
    if ((Atomics.load(this.i32, H_GLOBAL_SEQ / 4) & 1) !== 0) Atomics.add(this.i32, H_GLOBAL_SEQ / 4, 1);
  }

  /** Owner only: the uids that currently hold a slot. */
  uids(): string[] {
    this.requireOwner('uids');
    return [...this.index.keys()];
  }

  /** Plain (unlocked) uid check; callers hold the slot's write side or re-check the seqlock. */
  private slotHoldsUid(b: number, uidBytes: Uint8Array, uidLen: number): boolean {
    if (this.view.getInt32(b + S_STATE, true) !== SLOT_USED) return false;
    if (this.view.getUint32(b + S_UID_LENGTH, true) !== uidLen) return false;
    const u8 = this.u8;
    const start = b + S_UID;
    for (let i = 0; i < uidLen; i++) if (u8[start + i] !== uidBytes[i]) return false;
    return true;
  }

  /**
   * Any thread. The status in `slot`, or undefined if the slot is free, has no
   * status yet, or (when `expectedUid` is given) holds another pod.
   */
  read(slot: number, expectedUid?: string): PodStatus | undefined {
    const b = this.base(slot);
    const uidLen = expectedUid === undefined ? -1 : encoder.encodeInto(expectedUid, this.uidScratch).written;
    const len = seqReadConsistent(
      this.i32,
      (b + S_SEQ) / 4,
      () => {
        if (uidLen >= 0) {
          if (!this.slotHoldsUid(b, this.uidScratch, uidLen)) return 0;
        } else if (this.view.getInt32(b + S_STATE, true) !== SLOT_USED) {
          return 0;
        }
        const n = this.view.getUint32(b + S_LENGTH, true);
        let at = b + SLOT_HEADER_BYTES;
        if (n > this.inPlace) {
          at = this.view.getUint32(b + S_EXT_OFFSET, true);
          if (n > this.view.getUint32(b + S_EXT_BYTES, true) || at + n > this.u8.length) throw new RangeError('torn length');
          if (n > this.scratch.byteLength) this.scratch = new Uint8Array(roomFor(n, MIN_EXTENT_BYTES));
        }
        this.scratch.set(this.u8.subarray(at, at + n));
        return n;
      },
      undefined,
      slot,
    );
    return len === 0 ? undefined : decodePodStatus(this.scratch, len);
  }

  /** Any thread. `read` with a required uid check. */
  readSlot(slot: number, expectedUid: string): PodStatus | undefined {
    return this.read(slot, expectedUid);
  }

  /** Any thread. The status timestamp (ms) of `slot`; NaN if free or no status yet. */
  readTimestamp(slot: number): number {
    const b = this.base(slot);
    return this.locks.readConsistent(slot, () => this.view.getFloat64(b + S_TIMESTAMP, true));
  }

  /** Any thread. The global timestamp (ms); NaN until the first `setGlobalTimestamp`. */
  getGlobalTimestamp(): number {
    return seqReadConsistent(this.i32, H_GLOBAL_SEQ / 4, () => this.f64[H_GLOBAL_TS / 8], undefined, 'global');
  }

  /** Any thread (the PLEG, at the end of a relist): upstream `cache.UpdateTime`. */
  setGlobalTimestamp(ms: number): void {
    seqWriteAcquire(this.i32, H_GLOBAL_SEQ / 4, 'global');
    this.f64[H_GLOBAL_TS / 8] = ms;
    seqWriteEnd(this.i32, H_GLOBAL_SEQ / 4, 'global');
    Atomics.add(this.i32, H_GENERATION / 4, 1);
  }

  /** Any thread. Upstream `getIfNewerThan` for a pod without an entry: global timestamp after `ms`. */
  isGlobalNewerThan(ms: number): boolean {
    return this.getGlobalTimestamp() > ms;
  }

  /**
   * Any thread. Upstream `getIfNewerThan`: true if the slot's status
   * timestamp or the global timestamp is strictly after `ms`. A free slot or
   * one with no status yet counts as "no entry" (only the global timestamp
   * decides, and the status is then the empty one).
   */
  isNewerThan(slot: number, ms: number): boolean {
    const ts = this.readTimestamp(slot);
    if (ts > ms) return true; // NaN compares false
    return this.getGlobalTimestamp() > ms;
  }

  /** Any thread. Bumped on every write, free and global timestamp update; poll to detect change. */
  generation(): number {
    return Atomics.load(this.i32, H_GENERATION / 4);
  }
}
