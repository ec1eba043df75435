import { describe, expect, it } from 'vitest';
import { CapacityError, KubeletTsError } from '../../src/common/errors.js';
import type { PodStatus } from '../../src/runtime/types.js';
import {
  bytesFor,
  capacityForMaxPods,
  DEFAULT_SLOT_BYTES,
  H_GLOBAL_SEQ,
  HEADER_BYTES,
  PodStatusCache,
  S_SEQ,
} from '../../src/shared/pod-status-cache.js';

function status(uid: string, timestamp = 1000, message = ''): PodStatus {
  return {
    uid,
    name: `pod-${uid}`,
    namespace: 'ns',
    ips: ['10.1.2.3'],
    timestamp,
    sandboxStatuses: [
      { id: 'f'.repeat(64), state: 'ready', createdAt: 1_700_000_000_000_000_001n, attempt: 0, ips: ['10.1.2.3'], hostNetwork: false },
    ],
    containerStatuses: [
      {
        id: '1'.repeat(64),
        name: 'c',
        state: 'running',
        createdAt: 1n,
        startedAt: 2n,
        finishedAt: 0n,
        exitCode: 0,
        reason: '',
        message,
        image: 'img',
        imageRef: 'sha256:x',
        restartCount: 0,
        hash: 'h',
        sandboxId: 'f'.repeat(64),
      },
    ],
  };
}

describe('PodStatusCache', () => {
  it('sizes the buffer from capacity and slotBytes', () => {
    const c = PodStatusCache.create({ capacity: 3, slotBytes: 1024 });
    expect(c.buffer.byteLength).toBe(bytesFor(3, 1024));
    expect(bytesFor(3, 1024)).toBe(HEADER_BYTES + 3 * 1024);
    expect(PodStatusCache.create({ capacity: 1 }).slotBytes).toBe(DEFAULT_SLOT_BYTES);
    expect(capacityForMaxPods(110)).toBe(220);
  });

  it('rejects bad options', () => {
    expect(() => PodStatusCache.create({ capacity: 0 })).toThrow(KubeletTsError);
    expect(() => PodStatusCache.create({ capacity: 1, slotBytes: 1001 })).toThrow(/multiple of 8/);
  });

  it('allocates, returns the existing slot, frees and reuses', () => {
    const c = PodStatusCache.create({ capacity: 2, slotBytes: 1024 });
    const a = c.allocate('a');
    expect(c.allocate('a')).toBe(a);
    const b = c.allocate('b');
    expect(b).not.toBe(a);
    expect(c.slotOf('a')).toBe(a);
    expect(c.uidAt(a)).toBe('a');
    expect(c.size).toBe(2);
    c.free('a');
    expect(c.slotOf('a')).toBeUndefined();
    expect(c.uidAt(a)).toBeUndefined();
    expect(c.allocate('c')).toBe(a);
    c.free('not-there');
  });

  it('throws CapacityError naming the capacity when full', () => {
    const c = PodStatusCache.create({ capacity: 2, slotBytes: 1024 });
    c.allocate('a');
    c.allocate('b');
    expect(() => c.allocate('c')).toThrow(CapacityError);
    expect(() => c.allocate('c')).toThrow(/capacity 2 slots.*pod c/);
  });

  it('rejects uids longer than the uid area', () => {
    const c = PodStatusCache.create({ capacity: 1, slotBytes: 1024 });
    expect(() => c.allocate('u'.repeat(65))).toThrow(CapacityError);
  });

  it('keeps every slot, including the last, within its own bytes', () => {
    const c = PodStatusCache.create({ capacity: 3, slotBytes: 1024 });
    const uids = ['a', 'b', 'c'];
    for (const u of uids) c.allocate(u);
    for (const u of uids) c.write(c.slotOf(u)!, status(u, u.charCodeAt(0), u.repeat(600)));
    for (const u of uids) expect(c.read(c.slotOf(u)!, u)).toEqual(status(u, u.charCodeAt(0), u.repeat(600)));
  });

  it('writes and reads a status with its timestamp', () => {
    const c = PodStatusCache.create({ capacity: 4, slotBytes: 2048 });
    const slot = c.allocate('p1');
    expect(c.read(slot)).toBeUndefined();
    expect(c.readTimestamp(slot)).toBeNaN();
    const s = status('p1', 1234.5, 'héllo');
    c.write(slot, s);
    expect(c.read(slot)).toEqual(s);
    expect(c.read(slot, 'p1')).toEqual(s);
    expect(c.readSlot(slot, 'p1')).toEqual(s);
    expect(c.readTimestamp(slot)).toBe(1234.5);
  });

  it('returns undefined on uid mismatch or a freed slot', () => {
    const c = PodStatusCache.create({ capacity: 4, slotBytes: 2048 });
    const slot = c.allocate('p1');
    c.write(slot, status('p1'));
    expect(c.read(slot, 'p2')).toBeUndefined();
    expect(c.read(slot, 'p')).toBeUndefined();
    c.free('p1');
    expect(c.read(slot)).toBeUndefined();
    expect(c.read(slot, 'p1')).toBeUndefined();
    const again = c.allocate('p3');
    expect(again).toBe(slot);
    expect(c.read(slot, 'p3')).toBeUndefined();
  });

  it('refuses to write a status into a slot of another pod or a free slot', () => {
    const c = PodStatusCache.create({ capacity: 2, slotBytes: 2048 });
    const slot = c.allocate('p1');
    expect(() => c.write(slot, status('p2'))).toThrow(/allocated to another pod/);
    expect(() => c.write(1, status('p1'))).toThrow(KubeletTsError);
  });

  const many = (uid: string, n: number, timestamp = 1000): PodStatus => {
    const base = status(uid, timestamp);
    const c = base.containerStatuses[0];
    return { ...base, containerStatuses: Array.from({ length: n }, (_, i) => ({ ...c, id: `${i}`.padStart(64, '0'), name: `c${i}` })) };
  };

  it("keeps a status larger than the slot in the slot's extent, readable from every view, and reuses it", () => {
    const c = PodStatusCache.create({ capacity: 2, slotBytes: 1024 });
    const fixed = c.buffer.byteLength;
    const a = c.allocate('p1');
    const b = c.allocate('p2');
    c.write(b, status('p2'));
    const big = many('p1', 200);
    c.write(a, big);
    expect(c.buffer.byteLength).toBeGreaterThan(fixed);
    expect(c.read(a, 'p1')).toEqual(big);
    expect(PodStatusCache.attach(c.buffer).read(a, 'p1')).toEqual(big);
    expect(c.read(b, 'p2')).toEqual(status('p2'));
    // Smaller again (in place), then large again, then another pod in the freed slot: no new memory.
    const grown = c.buffer.byteLength;
    c.write(a, status('p1', 2000));
    expect(c.read(a, 'p1')).toEqual(status('p1', 2000));
    c.write(a, many('p1', 150, 3000));
    c.free('p1');
    const again = c.allocate('p3');
    expect(again).toBe(a);
    c.write(again, many('p3', 200));
    expect(c.read(again, 'p3')).toEqual(many('p3', 200));
    expect(c.buffer.byteLength).toBe(grown);
  });

  it('keeps the previous status when the room for large statuses is used up (CapacityError naming the pod)', () => {
    const c = PodStatusCache.create({ capacity: 1, slotBytes: 1024, extentBytes: 64 * 1024 });
    const slot = c.allocate('p1');
    const s = status('p1');
    c.write(slot, s);
    expect(() => c.write(slot, many('p1', 1000, 2))).toThrow(CapacityError);
    expect(() => c.write(slot, many('p1', 1000, 2))).toThrow(/the status of pod p1 \(\d+ bytes encoded\)/);
    expect(c.read(slot)).toEqual(s);
    c.write(slot, status('p1', 3));
    expect(c.read(slot)?.timestamp).toBe(3);
  });

  it('detects a second writer on the same slot', () => {
    const c = PodStatusCache.create({ capacity: 1, slotBytes: 1024 });
    const slot = c.allocate('p1');
    const words = new Int32Array(c.buffer);
    Atomics.add(words, (HEADER_BYTES + S_SEQ) / 4, 1); // a write in progress elsewhere
    expect(() => c.write(slot, status('p1'))).toThrow(/another write was in progress/);
    Atomics.add(words, (HEADER_BYTES + S_SEQ) / 4, 1);
    c.write(slot, status('p1'));
  });

  it('shares state with attached views; only the owner allocates', () => {
    const owner = PodStatusCache.create({ capacity: 3, slotBytes: 1024 });
    const slot = owner.allocate('p1');
    const view = PodStatusCache.attach(owner.buffer);
    expect(view.capacity).toBe(3);
    view.write(slot, status('p1', 7));
    expect(owner.read(slot, 'p1')?.timestamp).toBe(7);
    expect(view.slotOf('p1')).toBe(slot);
    expect(() => view.allocate('p2')).toThrow(/owning thread/);
    const takeover = PodStatusCache.attach(owner.buffer, { owner: true });
    expect(takeover.slotOf('p1')).toBe(slot);
    expect(takeover.allocate('p2')).not.toBe(slot);
  });

  it('rejects a foreign or mismatched buffer on attach', () => {
    expect(() => PodStatusCache.attach(new SharedArrayBuffer(128))).toThrow(/bad magic/);
    const c = PodStatusCache.create({ capacity: 1, slotBytes: 1024 });
    new DataView(c.buffer).setInt32(4, 99, true);
    expect(() => PodStatusCache.attach(c.buffer)).toThrow(/layout version 99/);
  });

  it('keeps a global timestamp, unset until the first update', () => {
    const c = PodStatusCache.create({ capacity: 1, slotBytes: 1024 });
    expect(c.getGlobalTimestamp()).toBeNaN();
    const g0 = c.generation();
    c.setGlobalTimestamp(5000.25);
    expect(PodStatusCache.attach(c.buffer).getGlobalTimestamp()).toBe(5000.25);
    expect(c.generation()).toBeGreaterThan(g0);
  });

  it('lets any thread set the global timestamp, one write at a time; the owner recovers one a dead writer left open', () => {
    const c = PodStatusCache.create({ capacity: 1, slotBytes: 1024 });
    const words = new Int32Array(c.buffer);
    PodStatusCache.attach(c.buffer).setGlobalTimestamp(10); // a worker's view
    expect(c.getGlobalTimestamp()).toBe(10);
    Atomics.add(words, H_GLOBAL_SEQ / 4, 1); // a write in progress on a thread that then died
    expect(() => c.setGlobalTimestamp(20)).toThrow(/another write was in progress/);
    expect(() => PodStatusCache.attach(c.buffer).recoverGlobalAfterWriterCrash()).toThrow(/owning thread/);
    c.recoverGlobalAfterWriterCrash();
    c.setGlobalTimestamp(30);
    expect(c.getGlobalTimestamp()).toBe(30);
    c.recoverGlobalAfterWriterCrash(); // nothing open: no change
    expect(Atomics.load(words, H_GLOBAL_SEQ / 4) % 2).toBe(0);
  });

  it('isNewerThan follows upstream getIfNewerThan (strictly after; entry or global)', () => {
    const c = PodStatusCache.create({ capacity: 2, slotBytes: 2048 });
    const slot = c.allocate('p1');
    const empty = c.allocate('p2');
    expect(c.isNewerThan(slot, 0)).toBe(false); // no entry, no global timestamp
    c.write(slot, status('p1', 1000));
    expect(c.isNewerThan(slot, 999)).toBe(true);
    expect(c.isNewerThan(slot, 1000)).toBe(false);
    expect(c.isNewerThan(empty, 999)).toBe(false);
    c.setGlobalTimestamp(2000);
    expect(c.isNewerThan(slot, 1500)).toBe(true);
    expect(c.isNewerThan(empty, 1500)).toBe(true);
    expect(c.isGlobalNewerThan(1999)).toBe(true);
    expect(c.isNewerThan(slot, 2000)).toBe(false);
  });
});
