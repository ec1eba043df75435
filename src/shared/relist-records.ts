/**
 * The relist record table: per pod, the compact (id key, state) records of
 * its sandboxes and containers for two generations, old and new, which the
 * PLEG diffs (upstream GenericPLEG podRecords {old, current}).
 *
 * Phases and ownership:
 * - One relist writer at a time, on any thread: `beginGeneration()` takes a
 *   writer flag in shared memory (throws if another writer holds it), then
 *   `putPod(…)` per pod, then `commitGeneration()` (or `abortGeneration()`).
 *   The writer keeps uid→slot in its JS memory; slots also hold their uid,
 *   so `beginGeneration` rebuilds the index by scanning when another
 *   instance (thread) committed or aborted since this one last did.
 * - The writer fills the generation that is not current, i.e. it overwrites
 *   the "old" side; `commitGeneration` then flips the current-generation
 *   header word with Atomics.store (which publishes all record writes), so
 *   the previous "new" becomes "old".
 * - Readers (diff shards, any thread) read between a commit and the next
 *   `beginGeneration`: the relist finishes its diffs before starting another.
 *   There is no per-slot lock; check `committedGeneration()` if in doubt.
 *
 * Lifetime of a slot: allocated when a new uid is put; when a pod is not put
 * in a generation it reads as absent in "new" (so the diff sees its records
 * vanish); a slot absent in both generations is freed at commit.
 *
 * Id keys: a record stores the 64-bit `idKey` of the CRI id (see id-key.ts),
 * not the id. Diffs report keys; resolve them to ids with `idKey` over the
 * candidate ids (the new runtime list, the cached PodStatus of the pod).
 *
 * Size: a slot holds `maxSandboxesPerPod` sandbox and `maxContainersPerPod`
 * container records per generation in place. A pod with more keeps that
 * generation's records in an extent after the slots (growable-arena.ts),
 * which its slot keeps for the next pods; so any pod can be recorded, and
 * memory grows only for the pods that need it.
 */
import { CapacityError, KubeletTsError } from '../common/errors.js';
import { allocateExtent, createGrowableBuffer, DEFAULT_EXTENT_BYTES, initExtents, roomFor } from './growable-arena.js';
import { diffRecords, RECORD_WORDS, REC_HI, REC_LO, REC_STATE, sameRecordsAt, type RecordDiff } from './record-compare.js';
import { rebuildSlotIndex } from './slot-index.js';
import type { ContainerState, SandboxState } from '../runtime/types.js';
import { idKeyInto } from './id-key.js';

export const RELIST_RECORDS_MAGIC = 0x4b52454c; // 'KREL'
/** Bumped on any change to the layout below. */
export const RELIST_RECORDS_VERSION = 2;

// Header, Int32 word indexes.
export const H_MAGIC = 0;
export const H_VERSION = 1;
export const H_CAPACITY = 2;
export const H_MAX_CONTAINERS = 3;
export const H_MAX_SANDBOXES = 4;
export const H_SLOT_WORDS = 5;
/** Which generation (0|1) is "new"; the other is "old". Published with Atomics.store. */
export const H_CURRENT_GEN = 6;
/** Number of committed generations. */
export const H_COMMITTED = 7;
/** 1 while a writer is between beginGeneration and commit/abort. */
export const H_WRITER = 8;
/** Bumped by every commit and abort; a writer whose index is older rebuilds it. */
export const H_EPOCH = 9;
/** Extent allocation (growable-arena.ts): bytes allocated after the fixed part, and the fixed part's size. */
export const H_EXT_TOP = 10;
export const H_EXT_FIXED = 11;
export const HEADER_WORDS = 16;

// Slot, Int32 word offsets from the slot start.
export const S_STATE = 0; // SLOT_FREE | SLOT_USED
export const S_UID_LENGTH = 1; // bytes
export const S_UID = 2; // UID_BYTES of uid
export const UID_BYTES = 64;
export const S_GENS = S_UID + UID_BYTES / 4; // two generation blocks follow
// Generation block, word offsets from the block start.
export const G_PRESENT = 0;
export const G_SANDBOX_COUNT = 1;
export const G_CONTAINER_COUNT = 2;
/** The generation's extent (word index, 0 = none) and its size in records; kept when a later pod fits in place. */
export const G_EXT_AT = 3;
export const G_EXT_RECORDS = 4;
/**
 * In place: maxSandboxes sandbox records, then maxContainers container
 * records. A generation with more sandboxes or containers than that keeps
 * them all in its extent instead: the sandboxes, then the containers.
 */
export const G_RECORDS = 5;
export { RECORD_WORDS, REC_STATE };

export const SLOT_FREE = 0;
export const SLOT_USED = 1;

export const DEFAULT_MAX_CONTAINERS_PER_POD = 32;
export const DEFAULT_MAX_SANDBOXES_PER_POD = 4;

/** State codes. 0 is reserved for "non-existent". */
export const CONTAINER_STATE_CODES: Readonly<Record<ContainerState, number>> = {
  created: 1,
  running: 2,
  exited: 3,
  unknown: 4,
};
export const SANDBOX_STATE_CODES: Readonly<Record<SandboxState, number>> = { ready: 1, notready: 2 };
const CONTAINER_STATE_NAMES = ['non-existent', 'created', 'running', 'exited', 'unknown'] as const;
const SANDBOX_STATE_NAMES = ['non-existent', 'ready', 'notready'] as const;

export type Generation = 'old' | 'new';
/** Smallest extent, in records. */
const MIN_EXTENT_RECORDS = 64;

export interface RelistRecordTableOptions {
  /** Slots; normally capacityForMaxPods(maxPods) like the status cache. */
  capacity: number;
  /** Container records a slot holds in place per generation; a pod with more uses an extent. */
  maxContainersPerPod?: number;
  /** Sandbox records a slot holds in place per generation; a pod with more uses an extent. */
  maxSandboxesPerPod?: number;
  /** Room for extents (address space, grown into as needed). Default DEFAULT_EXTENT_BYTES. */
  extentBytes?: number;
}

export function generationWords(maxSandboxes: number, maxContainers: number): number {
  return G_RECORDS + RECORD_WORDS * (maxSandboxes + maxContainers);
}

export function slotWords(maxSandboxes: number, maxContainers: number): number {
  return S_GENS + 2 * generationWords(maxSandboxes, maxContainers);
}

/** SharedArrayBuffer size for the table's fixed part (header and slots). */
export function bytesFor(
  capacity: number,
  maxContainers = DEFAULT_MAX_CONTAINERS_PER_POD,
  maxSandboxes = DEFAULT_MAX_SANDBOXES_PER_POD,
): number {
  return 4 * (HEADER_WORDS + capacity * slotWords(maxSandboxes, maxContainers));
}

export interface RecordInput<S extends string> {
  id: string;
  state: S;
}

/** One side of a slot: zero-copy views of RECORD_WORDS-word records (REC_HI, REC_LO, REC_STATE). */
export interface SlotRecords {
  present: boolean;
  sandboxes: Uint32Array;
  containers: Uint32Array;
}

export interface SlotDiff {
  uid: string;
  sandboxes: RecordDiff<SandboxState>[];
  containers: RecordDiff<ContainerState>[];
}

const uidEncoder = new TextEncoder();
const uidDecoder = new TextDecoder('utf-8');

export class RelistRecordTable {
  readonly capacity: number;
  readonly maxContainersPerPod: number;
  readonly maxSandboxesPerPod: number;
  private readonly slotWords: number;
  private readonly genWords: number;
  private readonly u32: Uint32Array;
  private readonly i32: Int32Array;
  private readonly u8: Uint8Array;
  /** Writer-side state (JS memory). */
  private readonly index = new Map<string, number>();
  private readonly freeSlots: number[] = [];
  private readonly putThisGen = new Set<number>();
  private indexedAt = -1;
  private writing = false;
  private readonly key = new Uint32Array(2);
  private readonly uidBytes = new Uint8Array(UID_BYTES * 3);
  /** Scratch for `locate`: [sandbox word, sandbox count, container word, container count]. */
  private readonly oldAt = new Int32Array(4);
  private readonly newAt = new Int32Array(4);

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.u32 = new Uint32Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.u8 = new Uint8Array(buffer);
    this.capacity = this.u32[H_CAPACITY];
    this.maxContainersPerPod = this.u32[H_MAX_CONTAINERS];
    this.maxSandboxesPerPod = this.u32[H_MAX_SANDBOXES];
    this.slotWords = this.u32[H_SLOT_WORDS];
    this.genWords = generationWords(this.maxSandboxesPerPod, this.maxContainersPerPod);
  }

  static create(opts: RelistRecordTableOptions): RelistRecordTable {
    const maxC = opts.maxContainersPerPod ?? DEFAULT_MAX_CONTAINERS_PER_POD;
    const maxS = opts.maxSandboxesPerPod ?? DEFAULT_MAX_SANDBOXES_PER_POD;
    for (const [what, v] of [
      ['capacity', opts.capacity],
      ['maxContainersPerPod', maxC],
      ['maxSandboxesPerPod', maxS],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new KubeletTsError(`relist record table ${what} must be a positive integer, got ${v}`);
    }
    const fixed = bytesFor(opts.capacity, maxC, maxS);
    const sab = createGrowableBuffer(fixed, opts.extentBytes ?? DEFAULT_EXTENT_BYTES);
    const u32 = new Uint32Array(sab);
    initExtents(new Int32Array(sab), H_EXT_TOP, fixed);
    u32[H_MAGIC] = RELIST_RECORDS_MAGIC;
    u32[H_VERSION] = RELIST_RECORDS_VERSION;
    u32[H_CAPACITY] = opts.capacity;
    u32[H_MAX_CONTAINERS] = maxC;
    u32[H_MAX_SANDBOXES] = maxS;
    u32[H_SLOT_WORDS] = slotWords(maxS, maxC);
    const table = new RelistRecordTable(sab);
    table.rebuildIndex();
    return table;
  }

  /** Any thread: a view of an existing table, with the uid→slot index rebuilt from the slots. */
  static attach(sab: SharedArrayBuffer): RelistRecordTable {
    const u32 = new Uint32Array(sab, 0, Math.min(HEADER_WORDS, sab.byteLength >> 2));
    if (u32.length < HEADER_WORDS || u32[H_MAGIC] !== RELIST_RECORDS_MAGIC) {
      throw new KubeletTsError('buffer is not a relist record table (bad magic)');
    }
    if (u32[H_VERSION] !== RELIST_RECORDS_VERSION) {
      throw new KubeletTsError(
        `relist record table layout version ${u32[H_VERSION]}, this build expects ${RELIST_RECORDS_VERSION}; ` +
          'main thread and workers run different builds',
      );
    }
    const expected = bytesFor(u32[H_CAPACITY], u32[H_MAX_CONTAINERS], u32[H_MAX_SANDBOXES]);
    if (sab.byteLength < expected || u32[H_EXT_FIXED] !== expected) {
      throw new KubeletTsError(`relist record table buffer is ${sab.byteLength} bytes, header says ${expected} and more`);
    }
    const table = new RelistRecordTable(sab);
    table.rebuildIndex();
    return table;
  }

  private rebuildIndex(): void {
    rebuildSlotIndex(this.capacity, (s) => this.uidAt(s), this.index, this.freeSlots);
    this.indexedAt = Atomics.load(this.i32, H_EPOCH);
  }

  private slotBase(slot: number): number {
    if (!(Number.isInteger(slot) && slot >= 0 && slot < this.capacity)) {
      throw new RangeError(`relist record slot ${slot} out of range [0, ${this.capacity})`);
    }
    return HEADER_WORDS + slot * this.slotWords;
  }

  private genBase(slot: number, gen: 0 | 1): number {
    return this.slotBase(slot) + S_GENS + gen * this.genWords;
  }

  /** Any thread: index (0|1) of the "new" generation. */
  private newGen(): 0 | 1 {
    return Atomics.load(this.i32, H_CURRENT_GEN) === 0 ? 0 : 1;
  }

  // ---- Writer API (one relist at a time) ----

  /** Writer. Starts filling the next generation; throws if another writer is active. */
  beginGeneration(): void {
    if (Atomics.compareExchange(this.i32, H_WRITER, 0, 1) !== 0) {
      throw new KubeletTsError('relist record table: beginGeneration while another relist is writing; relists must run one at a time');
    }
    this.writing = true;
    if (Atomics.load(this.i32, H_EPOCH) !== this.indexedAt) this.rebuildIndex();
    this.putThisGen.clear();
    const next = this.newGen() === 0 ? 1 : 0;
    for (const slot of this.index.values()) this.u32[this.genBase(slot, next) + G_PRESENT] = 0;
  }

  /**
   * Writer. Records `uid`'s sandboxes and containers in the generation being
   * filled. Throws CapacityError, with nothing of this pod written, when the
   * pod cannot be recorded (the table is full, the uid is too long, or the
   * room for extents is used up); the other pods of the generation are not
   * affected: the caller skips this one and goes on.
   */
  putPod(uid: string, sandboxes: readonly RecordInput<SandboxState>[], containers: readonly RecordInput<ContainerState>[]): void {
    if (!this.writing) throw new KubeletTsError('relist record table: putPod outside beginGeneration/commitGeneration');
    let slot = this.index.get(uid);
    if (slot === undefined) slot = this.allocate(uid);
    if (this.putThisGen.has(slot)) {
      throw new KubeletTsError(`relist record table: pod ${uid} put twice in one generation; group runtime pods by uid first`);
    }
    const next = this.newGen() === 0 ? 1 : 0;
    const g = this.genBase(slot, next);
    const u32 = this.u32;
    const ns = sandboxes.length;
    const nc = containers.length;
    let s0 = g + G_RECORDS;
    let c0 = s0 + RECORD_WORDS * this.maxSandboxesPerPod;
    if (ns > this.maxSandboxesPerPod || nc > this.maxContainersPerPod) {
      if (u32[g + G_EXT_RECORDS] < ns + nc) {
        const records = roomFor(ns + nc, MIN_EXTENT_RECORDS);
        const what = `the relist records of pod ${uid} (${nc} containers, ${ns} sandboxes)`;
        u32[g + G_EXT_AT] = allocateExtent(this.buffer, this.i32, H_EXT_TOP, 4 * RECORD_WORDS * records, what) / 4;
        u32[g + G_EXT_RECORDS] = records;
      }
      s0 = u32[g + G_EXT_AT];
      c0 = s0 + RECORD_WORDS * ns;
    }
    this.putThisGen.add(slot);
    const key = this.key;
    u32[g + G_PRESENT] = 1;
    u32[g + G_SANDBOX_COUNT] = ns;
    u32[g + G_CONTAINER_COUNT] = nc;
    let r = s0;
    for (let i = 0; i < sandboxes.length; i++, r += RECORD_WORDS) {
      idKeyInto(sandboxes[i].id, key);
      u32[r + REC_HI] = key[0];
      u32[r + REC_LO] = key[1];
      u32[r + REC_STATE] = SANDBOX_STATE_CODES[sandboxes[i].state];
    }
    r = c0;
    for (let i = 0; i < containers.length; i++, r += RECORD_WORDS) {
      idKeyInto(containers[i].id, key);
      u32[r + REC_HI] = key[0];
      u32[r + REC_LO] = key[1];
      u32[r + REC_STATE] = CONTAINER_STATE_CODES[containers[i].state];
    }
  }

  private allocate(uid: string): number {
    const n = uidEncoder.encodeInto(uid, this.uidBytes).written;
    if (n === 0 || n > UID_BYTES) {
      throw new CapacityError(`pod uid ${JSON.stringify(uid)} is ${n} UTF-8 bytes; relist record slots hold 1..${UID_BYTES}`);
    }
    const slot = this.freeSlots.pop();
    if (slot === undefined) {
      throw new CapacityError(
        `relist record table is full (capacity ${this.capacity} pods) adding pod ${uid}; ` +
          'capacity should be at least capacityForMaxPods(maxPods)',
      );
    }
    const b = this.slotBase(slot);
    // A freed slot keeps its extents (G_EXT_*) for the next pod.
    this.u32[this.genBase(slot, 0) + G_PRESENT] = 0;
    this.u32[this.genBase(slot, 1) + G_PRESENT] = 0;
    this.u32[b + S_UID_LENGTH] = n;
    this.u8.set(this.uidBytes.subarray(0, n), (b + S_UID) * 4);
    this.u32[b + S_STATE] = SLOT_USED;
    this.index.set(uid, slot);
    return slot;
  }

  /**
   * Writer. Pods not put in this generation read as absent in it; slots
   * absent in both generations are freed; then `flip()` makes this
   * generation "new" and the previous one "old".
   */
  commitGeneration(): void {
    if (!this.writing) throw new KubeletTsError('relist record table: commitGeneration without beginGeneration');
    const next = this.newGen() === 0 ? 1 : 0;
    const cur = next === 0 ? 1 : 0;
    for (const [uid, slot] of this.index) {
      if (this.putThisGen.has(slot)) continue;
      if (this.u32[this.genBase(slot, cur) + G_PRESENT] === 0) {
        const b = this.slotBase(slot);
        this.u32[b + S_STATE] = SLOT_FREE;
        this.u32[b + S_UID_LENGTH] = 0;
        this.index.delete(uid);
        this.freeSlots.push(slot);
      }
    }
    this.flip();
    Atomics.add(this.i32, H_COMMITTED, 1);
    this.release();
  }

  /**
   * Writer. Drops the generation being filled (e.g. after a CapacityError or
   * a failed runtime list). The committed "new" generation stays intact and
   * the next commit diffs against it; the "old" side was being overwritten
   * and must not be diffed until then. Slots allocated in the aborted
   * generation are absent in both and are freed by the next commit.
   */
  abortGeneration(): void {
    if (!this.writing) return;
    this.release();
  }

  private release(): void {
    this.writing = false;
    this.putThisGen.clear();
    this.indexedAt = Atomics.add(this.i32, H_EPOCH, 1) + 1;
    Atomics.store(this.i32, H_WRITER, 0);
  }

  /**
   * Main thread, only when the relist task's thread died (no writer runs):
   * clears the writer flag, makes every instance rebuild its index, and
   * forgets the committed generation, which the dead relist may have committed
   * before its events left the thread: the next relist reports everything
   * again (as a fresh PLEG's first), so no change is lost.
   */
  recoverAfterWriterCrash(): void {
    const cur = this.newGen();
    for (let slot = 0; slot < this.capacity; slot++) {
      if (this.u32[this.slotBase(slot) + S_STATE] === SLOT_USED) this.u32[this.genBase(slot, cur) + G_PRESENT] = 0;
    }
    Atomics.add(this.i32, H_EPOCH, 1);
    Atomics.store(this.i32, H_WRITER, 0);
  }

  /** Writer (commitGeneration calls it). Swaps which generation is "new"; publishes all prior writes. */
  flip(): void {
    Atomics.store(this.i32, H_CURRENT_GEN, this.newGen() === 0 ? 1 : 0);
  }

  // ---- Reader API (any thread, between commits) ----

  /** Number of slots to scan (the capacity); free slots have `uidAt` undefined. */
  slotCount(): number {
    return this.capacity;
  }

  /** Number of commits so far; readers can check it did not move during their read. */
  committedGeneration(): number {
    return Atomics.load(this.i32, H_COMMITTED);
  }

  /** The uid in `slot`, or undefined if the slot is free. */
  uidAt(slot: number): string | undefined {
    const b = this.slotBase(slot);
    if (this.u32[b + S_STATE] !== SLOT_USED) return undefined;
    const n = Math.min(this.u32[b + S_UID_LENGTH], UID_BYTES);
    return uidDecoder.decode(this.u8.slice((b + S_UID) * 4, (b + S_UID) * 4 + n));
  }

  /** Writer-side index lookup (this instance's view). */
  slotOf(uid: string): number | undefined {
    return this.index.get(uid);
  }

  /**
   * Where generation block `g`'s records are: out = [sandbox word, sandbox
   * count, container word, container count]; counts are 0 when absent.
   */
  private locate(g: number, out: Int32Array): void {
    const u32 = this.u32;
    const present = u32[g + G_PRESENT] === 1;
    const ns = present ? u32[g + G_SANDBOX_COUNT] : 0;
    const nc = present ? u32[g + G_CONTAINER_COUNT] : 0;
    out[1] = ns;
    out[3] = nc;
    if (ns <= this.maxSandboxesPerPod && nc <= this.maxContainersPerPod) {
      out[0] = g + G_RECORDS;
      out[2] = g + G_RECORDS + RECORD_WORDS * this.maxSandboxesPerPod;
      return;
    }
    const at = u32[g + G_EXT_AT];
    if (at === 0 || ns + nc > u32[g + G_EXT_RECORDS] || at + RECORD_WORDS * (ns + nc) > u32.length) {
      throw new KubeletTsError(`relist record table: generation block at word ${g} names an extent it does not have`);
    }
    out[0] = at;
    out[2] = at + RECORD_WORDS * ns;
  }

  /** Zero-copy views of one generation of `slot`. */
  records(slot: number, gen: Generation): SlotRecords {
    const g = this.genBase(slot, gen === 'new' ? this.newGen() : this.newGen() === 0 ? 1 : 0);
    const at = this.newAt;
    this.locate(g, at);
    return {
      present: this.u32[g + G_PRESENT] === 1,
      sandboxes: this.u32.subarray(at[0], at[0] + RECORD_WORDS * at[1]),
      containers: this.u32.subarray(at[2], at[2] + RECORD_WORDS * at[3]),
    };
  }

  /**
   * True if the old and new generations of `slot` differ (presence, ids or
   * states). Allocates nothing: every relist asks it of every slot.
   */
  slotChanged(slot: number): boolean {
    const u32 = this.u32;
    const ng = this.newGen();
    const o = this.genBase(slot, ng === 0 ? 1 : 0);
    const n = this.genBase(slot, ng);
    const present = u32[n + G_PRESENT] === 1;
    if ((u32[o + G_PRESENT] === 1) !== present) return true;
    if (!present) return false;
    const a = this.oldAt;
    const b = this.newAt;
    this.locate(o, a);
    this.locate(n, b);
    return !sameRecordsAt(u32, a[0], a[1], b[0], b[1]) || !sameRecordsAt(u32, a[2], a[3], b[2], b[3]);
  }

  /** Per id in either generation of `slot`: its old and new state ('non-existent' when absent). */
  diffSlot(slot: number): SlotDiff | undefined {
    const uid = this.uidAt(slot);
    if (uid === undefined) return undefined;
    const o = this.records(slot, 'old');
    const n = this.records(slot, 'new');
    return {
      uid,
      sandboxes: diffRecords(o.sandboxes, n.sandboxes, SANDBOX_STATE_NAMES),
      containers: diffRecords(o.containers, n.containers, CONTAINER_STATE_NAMES),
    };
  }
}
