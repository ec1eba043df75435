import { describe, expect, it } from 'vitest';
import { CapacityError, KubeletTsError } from '../../src/common/errors.js';
import { idKey } from '../../src/shared/id-key.js';
import { bytesFor, RECORD_WORDS, REC_STATE, RelistRecordTable } from '../../src/shared/relist-records.js';

const hex = (c: string) => c.repeat(64);
const S1 = hex('a');
const C1 = hex('1');
const C2 = hex('2');

describe('idKey', () => {
  it('uses the first 16 hex digits of CRI ids', () => {
    expect(idKey('0123456789abcdef' + 'f'.repeat(48))).toBe('0123456789abcdef');
    expect(idKey(hex('A'))).toBe('aaaaaaaaaaaaaaaa');
  });
  it('hashes other ids with FNV-1a 64', () => {
    expect(idKey('')).toBe('cbf29ce484222325');
    expect(idKey('a')).toBe('af63dc4c8601ec8c');
    expect(idKey('foobar')).toBe('85944171f73967e8');
    expect(idKey('c1')).not.toBe(idKey('c2'));
  });
});

describe('RelistRecordTable', () => {
  it('sizes the buffer', () => {
    const t = RelistRecordTable.create({ capacity: 5 });
    expect(t.buffer.byteLength).toBe(bytesFor(5, 32, 4));
    expect(t.buffer.growable).toBe(true);
    expect(t.maxContainersPerPod).toBe(32);
    expect(t.maxSandboxesPerPod).toBe(4);
  });

  it('keeps old and new generations and diffs them', () => {
    const t = RelistRecordTable.create({ capacity: 4 });
    t.beginGeneration();
    t.putPod('p1', [{ id: S1, state: 'ready' }], [{ id: C1, state: 'running' }]);
    t.commitGeneration();
    const slot = t.slotOf('p1')!;
    expect(t.uidAt(slot)).toBe('p1');
    expect(t.records(slot, 'old').present).toBe(false);
    expect(t.records(slot, 'new').present).toBe(true);
    expect(t.diffSlot(slot)).toEqual({
      uid: 'p1',
      sandboxes: [{ key: idKey(S1), old: 'non-existent', new: 'ready' }],
      containers: [{ key: idKey(C1), old: 'non-existent', new: 'running' }],
    });

    t.beginGeneration();
    t.putPod(
      'p1',
      [{ id: S1, state: 'ready' }],
      [
        { id: C1, state: 'exited' },
        { id: C2, state: 'created' },
      ],
    );
    t.commitGeneration();
    expect(t.slotChanged(slot)).toBe(true);
    expect(t.diffSlot(slot)?.containers).toEqual([
      { key: idKey(C1), old: 'running', new: 'exited' },
      { key: idKey(C2), old: 'non-existent', new: 'created' },
    ]);
    expect(t.diffSlot(slot)?.sandboxes).toEqual([{ key: idKey(S1), old: 'ready', new: 'ready' }]);
    const recs = t.records(slot, 'new');
    expect(recs.containers.length).toBe(2 * RECORD_WORDS);
    expect(recs.containers[REC_STATE]).toBe(3);
    expect(t.committedGeneration()).toBe(2);
  });

  it('treats reordered identical records as unchanged', () => {
    const t = RelistRecordTable.create({ capacity: 2 });
    t.beginGeneration();
    t.putPod(
      'p1',
      [],
      [
        { id: C1, state: 'running' },
        { id: C2, state: 'exited' },
      ],
    );
    t.commitGeneration();
    t.beginGeneration();
    t.putPod(
      'p1',
      [],
      [
        { id: C2, state: 'exited' },
        { id: C1, state: 'running' },
      ],
    );
    t.commitGeneration();
    expect(t.slotChanged(t.slotOf('p1')!)).toBe(false);
  });

  it('slotChanged: presence, a sandbox or container added, gone or in another state; free slots never', () => {
    const t = RelistRecordTable.create({ capacity: 3 });
    const gen = (pods: [uid: string, sandboxes: string[], containers: string[]][]) => {
      t.beginGeneration();
      for (const [uid, sb, cs] of pods) {
        t.putPod(
          uid,
          sb.map((state) => ({ id: S1, state: state as 'ready' })),
          cs.map((state, i) => ({ id: [C1, C2][i], state: state as 'running' })),
        );
      }
      t.commitGeneration();
    };
    const changed = () => [0, 1, 2].map((slot) => t.slotChanged(slot));
    gen([['p1', ['ready'], ['running']]]);
    const p1 = t.slotOf('p1')!;
    expect(changed()[p1]).toBe(true); // new
    gen([['p1', ['ready'], ['running']]]);
    expect(changed()).toEqual([false, false, false]);
    gen([['p1', ['notready'], ['running']]]);
    expect(changed()[p1]).toBe(true); // sandbox state
    gen([['p1', ['notready'], ['running', 'created']]]);
    expect(changed()[p1]).toBe(true); // a container more
    gen([['p1', ['notready'], ['running', 'created']]]);
    expect(changed()[p1]).toBe(false);
    gen([['p1', ['notready'], ['running', 'exited']]]);
    expect(changed()[p1]).toBe(true); // container state
    gen([['p1', [], ['running', 'exited']]]);
    expect(changed()[p1]).toBe(true); // sandbox gone
    gen([]);
    expect(changed()[p1]).toBe(true); // pod gone
    gen([]);
    expect(changed()).toEqual([false, false, false]);
  });

  it('flip swaps which generation reads as new', () => {
    const t = RelistRecordTable.create({ capacity: 2 });
    t.beginGeneration();
    t.putPod('p1', [], [{ id: C1, state: 'running' }]);
    t.commitGeneration();
    const slot = t.slotOf('p1')!;
    t.flip();
    expect(t.records(slot, 'new').present).toBe(false);
    expect(t.records(slot, 'old').present).toBe(true);
    t.flip();
    expect(t.records(slot, 'new').present).toBe(true);
  });

  it('marks pods absent when not put, then frees them once absent in both generations', () => {
    const t = RelistRecordTable.create({ capacity: 2 });
    t.beginGeneration();
    t.putPod('p1', [], [{ id: C1, state: 'running' }]);
    t.putPod('p2', [], []);
    t.commitGeneration();
    const slot = t.slotOf('p1')!;
    t.beginGeneration();
    t.putPod('p2', [], []);
    t.commitGeneration();
    expect(t.records(slot, 'new').present).toBe(false);
    expect(t.diffSlot(slot)?.containers).toEqual([{ key: idKey(C1), old: 'running', new: 'non-existent' }]);
    t.beginGeneration();
    t.putPod('p2', [], []);
    t.commitGeneration();
    expect(t.slotOf('p1')).toBeUndefined();
    expect(t.uidAt(slot)).toBeUndefined();
    expect(t.diffSlot(slot)).toBeUndefined();
    t.beginGeneration();
    t.putPod('p3', [], [{ id: C2, state: 'running' }]);
    t.commitGeneration();
    expect(t.slotOf('p3')).toBe(slot);
    expect(t.diffSlot(slot)?.containers).toEqual([{ key: idKey(C2), old: 'non-existent', new: 'running' }]);
  });

  const running = (n: number, prefix = 'c') => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, state: 'running' as const }));

  it('records a pod with more containers and sandboxes than a slot holds, in an extent, and diffs it', () => {
    const t = RelistRecordTable.create({ capacity: 4, maxContainersPerPod: 2, maxSandboxesPerPod: 1 });
    const fixed = t.buffer.byteLength;
    const boxes = [
      { id: S1, state: 'notready' as const },
      { id: hex('b'), state: 'ready' as const },
    ];
    t.beginGeneration();
    t.putPod('small', [], [{ id: C1, state: 'running' }]);
    t.putPod('big', boxes, running(200));
    t.commitGeneration();
    expect(t.buffer.byteLength).toBeGreaterThan(fixed);
    const big = t.slotOf('big')!;
    expect(t.records(big, 'new').containers.length).toBe(200 * RECORD_WORDS);
    expect(t.records(big, 'new').sandboxes.length).toBe(2 * RECORD_WORDS);
    expect(t.diffSlot(big)?.containers).toHaveLength(200);

    // Another view of the buffer (another thread) reads the grown part.
    const other = RelistRecordTable.attach(t.buffer);
    expect(other.diffSlot(big)?.containers.filter((c) => c.new === 'running')).toHaveLength(200);

    // One container dies: one change, found in the extent.
    const next = running(200);
    next[137] = { id: 'c137', state: 'exited' as never };
    t.beginGeneration();
    t.putPod('small', [], [{ id: C1, state: 'running' }]);
    t.putPod('big', boxes, next);
    t.commitGeneration();
    expect(t.slotChanged(t.slotOf('small')!)).toBe(false);
    expect(t.slotChanged(big)).toBe(true);
    expect(t.diffSlot(big)?.containers.filter((c) => c.old !== c.new)).toEqual([{ key: idKey('c137'), old: 'running', new: 'exited' }]);

    // The pod shrinks to fit in place, then grows again: the slot's extents are reused, nothing more is allocated.
    const grown = t.buffer.byteLength;
    t.beginGeneration();
    t.putPod('big', [boxes[1]], [{ id: 'c0', state: 'running' }]);
    t.commitGeneration();
    expect(t.diffSlot(big)?.containers.filter((c) => c.new === 'non-existent')).toHaveLength(199);
    for (let i = 0; i < 2; i++) {
      t.beginGeneration();
      t.putPod('big', boxes, next);
      t.commitGeneration();
    }
    expect(t.buffer.byteLength).toBe(grown);
    expect(t.slotChanged(big)).toBe(false);
  });

  it('when the room for extents is used up, only that pod is refused (CapacityError naming it); the others are recorded', () => {
    const t = RelistRecordTable.create({ capacity: 4, maxContainersPerPod: 2, maxSandboxesPerPod: 1, extentBytes: 4096 });
    t.beginGeneration();
    t.putPod('a', [], [{ id: C1, state: 'running' }]);
    expect(() => t.putPod('huge', [], running(1000))).toThrow(CapacityError);
    expect(() => t.putPod('huge', [], running(1000))).toThrow(/relist records of pod huge \(1000 containers, 0 sandboxes\)/);
    t.putPod('b', [], running(3));
    t.commitGeneration();
    expect(t.slotOf('huge')).toBeUndefined();
    expect(t.records(t.slotOf('a')!, 'new').present).toBe(true);
    expect(t.records(t.slotOf('b')!, 'new').containers.length).toBe(3 * RECORD_WORDS);
  });

  it('throws CapacityError when the table is full', () => {
    const t = RelistRecordTable.create({ capacity: 1 });
    t.beginGeneration();
    t.putPod('p1', [], []);
    expect(() => t.putPod('p2', [], [])).toThrow(/full \(capacity 1 pods\) adding pod p2/);
    t.abortGeneration();
  });

  it('abortGeneration keeps the committed new generation for the next diff', () => {
    const t = RelistRecordTable.create({ capacity: 2 });
    t.beginGeneration();
    t.putPod('p1', [], [{ id: C1, state: 'running' }]);
    t.commitGeneration();
    t.beginGeneration();
    t.putPod('p1', [], [{ id: C1, state: 'exited' }]);
    t.putPod('p2', [], []);
    t.abortGeneration();
    const slot = t.slotOf('p1')!;
    expect(t.records(slot, 'new').present).toBe(true);
    expect(t.records(slot, 'new').containers[REC_STATE]).toBe(2);
    expect(t.committedGeneration()).toBe(1);
    t.beginGeneration();
    t.putPod('p1', [], [{ id: C1, state: 'exited' }]);
    t.commitGeneration();
    expect(t.diffSlot(slot)?.containers).toEqual([{ key: idKey(C1), old: 'running', new: 'exited' }]);
    expect(t.slotOf('p2')).toBeUndefined();
  });

  it('after a relist thread died, the next relist reports everything again: the dead one may have committed and lost its events', () => {
    const t = RelistRecordTable.create({ capacity: 2 });
    t.beginGeneration();
    t.putPod('p1', [{ id: S1, state: 'ready' }], []);
    t.commitGeneration();
    // The dead relist's thread committed the sandbox's creation; its events never reached the main thread.
    t.beginGeneration();
    t.putPod('p1', [{ id: S1, state: 'ready' }], [{ id: C1, state: 'running' }]);
    t.commitGeneration();
    t.recoverAfterWriterCrash();
    const next = RelistRecordTable.attach(t.buffer);
    next.beginGeneration();
    next.putPod('p1', [{ id: S1, state: 'ready' }], [{ id: C1, state: 'running' }]);
    next.commitGeneration();
    const slot = next.slotOf('p1')!;
    expect(next.slotChanged(slot)).toBe(true);
    expect(next.diffSlot(slot)).toEqual({
      uid: 'p1',
      sandboxes: [{ key: idKey(S1), old: 'non-existent', new: 'ready' }],
      containers: [{ key: idKey(C1), old: 'non-existent', new: 'running' }],
    });
    // A pod gone meanwhile is freed, not reported present.
    next.beginGeneration();
    next.commitGeneration();
    next.recoverAfterWriterCrash();
    next.beginGeneration();
    next.commitGeneration();
    expect(next.slotOf('p1')).toBeUndefined();
  });

  it('allows one writer at a time and rejects misuse', () => {
    const t = RelistRecordTable.create({ capacity: 2 });
    expect(() => t.putPod('p', [], [])).toThrow(/outside beginGeneration/);
    t.beginGeneration();
    expect(() => RelistRecordTable.attach(t.buffer).beginGeneration()).toThrow(/one at a time/);
    t.putPod('p', [], []);
    expect(() => t.putPod('p', [], [])).toThrow(/put twice/);
    t.commitGeneration();
    expect(() => t.commitGeneration()).toThrow(KubeletTsError);
  });

  it('attach rebuilds the uid index and a different instance can run the next relist', () => {
    const a = RelistRecordTable.create({ capacity: 4, maxContainersPerPod: 8 });
    a.beginGeneration();
    a.putPod('p1', [], [{ id: C1, state: 'running' }]);
    a.putPod('p2', [], [{ id: C2, state: 'running' }]);
    a.commitGeneration();
    const b = RelistRecordTable.attach(a.buffer);
    expect(b.maxContainersPerPod).toBe(8);
    expect(b.slotOf('p1')).toBe(a.slotOf('p1'));
    expect(b.slotOf('p2')).toBe(a.slotOf('p2'));
    b.beginGeneration();
    b.putPod('p1', [], [{ id: C1, state: 'exited' }]);
    b.putPod('p4', [], []);
    b.commitGeneration();
    // a sees b's commit and rebuilds before writing again.
    a.beginGeneration();
    a.putPod('p1', [], [{ id: C1, state: 'exited' }]);
    a.putPod('p4', [], []);
    a.commitGeneration();
    expect(a.slotOf('p4')).toBe(b.slotOf('p4'));
    expect(new Set([a.slotOf('p1'), a.slotOf('p4')]).size).toBe(2);
    expect(a.slotOf('p2')).toBeUndefined();
  });

  it('frees slots allocated by another instance in an aborted generation', () => {
    const a = RelistRecordTable.create({ capacity: 1 });
    const b = RelistRecordTable.attach(a.buffer);
    b.beginGeneration();
    b.putPod('ghost', [], []);
    b.abortGeneration();
    a.beginGeneration();
    a.commitGeneration();
    expect(a.uidAt(0)).toBeUndefined();
    a.beginGeneration();
    a.putPod('p1', [], []);
    a.commitGeneration();
    expect(a.slotOf('p1')).toBe(0);
  });

  it('rejects a foreign buffer on attach', () => {
    expect(() => RelistRecordTable.attach(new SharedArrayBuffer(256))).toThrow(/bad magic/);
  });
});
