import { describe, expect, it } from 'vitest';
import type { ObjectReference } from '../../src/api/cluster.js';
import { ImageGcError } from '../../src/common/errors.js';
import type { EventRecorder, EventType } from '../../src/main/events/event-recorder.js';
import { ImageGcManager } from '../../src/main/images/image-gc-manager.js';
import { sandboxImageFromStatusInfo } from '../../src/main/images/image-gc-runtime.js';
import {
  assessUsage,
  policyError,
  removalOrder,
  updateRecords,
  type ImageGcPolicy,
  type ImageRecord,
} from '../../src/main/images/image-gc-policy.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { FakeImageGcRuntime } from '../fakes/fake-image-gc-runtime.js';

const POLICY: ImageGcPolicy = { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 120_000 };
const MIN = 60_000;

describe('image GC policy: checks (upstream NewImageGCManager)', () => {
  it.each([
    [{ highThresholdPercent: 101 }, 'invalid HighThresholdPercent 101, must be in range [0-100]'],
    [{ highThresholdPercent: -1 }, 'invalid HighThresholdPercent -1, must be in range [0-100]'],
    [{ lowThresholdPercent: 101, highThresholdPercent: 100 }, 'invalid LowThresholdPercent 101, must be in range [0-100]'],
    [{ lowThresholdPercent: 90 }, 'LowThresholdPercent 90 can not be higher than HighThresholdPercent 85'],
    [{ lowThresholdPercent: 85 }, undefined],
    [{}, undefined],
  ])('%j → %s', (over, message) => {
    expect(policyError({ ...POLICY, ...over })).toBe(message);
  });
});

describe('image GC policy: usage (upstream GarbageCollect arithmetic)', () => {
  it.each([
    { name: 'under the high mark', capacity: 1000n, available: 200n, verdict: { kind: 'under', usagePercent: 80 } },
    {
      name: 'at the high mark frees down to low',
      capacity: 1000n,
      available: 150n,
      verdict: { kind: 'over', usagePercent: 85, bytesToFree: 50 },
    },
    {
      name: 'available percent rounds down (integer division), so usage rounds up',
      capacity: 1000n,
      available: 159n,
      verdict: { kind: 'over', usagePercent: 85, bytesToFree: 41 },
    },
    { name: 'just under', capacity: 1000n, available: 160n, verdict: { kind: 'under', usagePercent: 84 } },
    { name: 'full', capacity: 1000n, available: 0n, verdict: { kind: 'over', usagePercent: 100, bytesToFree: 200 } },
    { name: 'available above capacity counts as capacity', capacity: 1000n, available: 5000n, verdict: { kind: 'under', usagePercent: 0 } },
    { name: 'capacity 0 is invalid', capacity: 0n, available: 0n, verdict: { kind: 'invalid-capacity' } },
    {
      name: 'large filesystems keep exact bytes',
      capacity: 10n ** 16n,
      available: 10n ** 15n,
      verdict: { kind: 'over', usagePercent: 90, bytesToFree: 10 ** 15 },
    },
  ])('$name', ({ capacity, available, verdict }) => {
    expect(assessUsage({ capacityBytes: capacity, availableBytes: available }, POLICY)).toEqual(verdict);
  });
});

describe('image GC policy: records (upstream detectImages)', () => {
  it('records first detection and last use, refreshes size and pins, forgets images gone', () => {
    const records = new Map<string, ImageRecord>();
    expect(
      updateRecords(
        records,
        [
          { id: 'a', size: 10, pinned: false },
          { id: 'b', size: 20, pinned: false },
        ],
        new Set(['a']),
        0,
        1000,
      ),
    ).toEqual(['a', 'b']);
    expect(records.get('a')).toEqual({ firstDetected: 0, lastUsed: 1000, size: 10, pinned: false });
    expect(records.get('b')).toEqual({ firstDetected: 0, lastUsed: 0, size: 20, pinned: false });
    expect(
      updateRecords(
        records,
        [
          { id: 'a', size: 11, pinned: true },
          { id: 'c', size: 5, pinned: false },
        ],
        new Set(),
        2000,
        2001,
      ),
    ).toEqual(['c']);
    expect([...records.keys()]).toEqual(['a', 'c']);
    expect(records.get('a')).toEqual({ firstDetected: 0, lastUsed: 1000, size: 11, pinned: true });
    expect(records.get('c')).toEqual({ firstDetected: 2000, lastUsed: 0, size: 5, pinned: false });
  });
});

describe('image GC policy: removal order (upstream freeSpace)', () => {
  const NOW = 1_700_000_000_000;
  const rec = (over: Partial<ImageRecord> = {}): ImageRecord => ({ firstDetected: 0, lastUsed: 0, size: 1, pinned: false, ...over });
  it.each([
    {
      name: 'least recently used first, ties by first detection',
      records: { c: rec({ lastUsed: NOW - MIN }), b: rec({ firstDetected: NOW - 10 * MIN }), a: rec({ firstDetected: NOW - 20 * MIN }) },
      order: ['a', 'b', 'c'],
    },
    { name: 'an image in use is kept', records: { used: rec(), free: rec() }, inUse: ['used'], order: ['free'] },
    { name: 'a pinned image is kept', records: { pin: rec({ pinned: true }), free: rec() }, order: ['free'] },
    {
      name: 'an image younger than minAge is kept',
      records: { young: rec({ firstDetected: NOW - MIN }), old: rec({ firstDetected: NOW - 3 * MIN }) },
      order: ['old'],
    },
    { name: 'minAge 0 lets a new image go', records: { young: rec({ firstDetected: NOW }) }, minAge: 0, order: ['young'] },
    { name: 'used at the free time is kept', records: { now: rec({ lastUsed: NOW }) }, order: [] },
  ])('$name', ({ records, inUse, minAge, order }) => {
    const out = removalOrder(new Map(Object.entries(records)), new Set(inUse ?? []), NOW, minAge ?? POLICY.minAgeMs);
    expect(out.map((c) => c.id)).toEqual(order);
  });
});

describe('sandboxImageFromStatusInfo', () => {
  it.each([
    [{ config: JSON.stringify({ sandboxImage: 'docker.io/kubelet-ts/pause:1.0', other: 1 }) }, 'docker.io/kubelet-ts/pause:1.0'],
    [{ config: '{' }, ''],
    [{}, ''],
    [{ config: JSON.stringify({ sandboxImage: 3 }) }, ''],
  ])('%j → %s', (info, name) => {
    expect(sandboxImageFromStatusInfo(info)).toBe(name);
  });
});

class RecordingRecorder implements EventRecorder {
  readonly events: { type: EventType; reason: string; message: string; ref: ObjectReference }[] = [];
  record(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    this.events.push({ ref, type, reason, message });
  }
}

const NODE: ObjectReference = { kind: 'Node', name: 'n1', uid: 'n1', namespace: '' };

function setup(policy: Partial<ImageGcPolicy> = {}) {
  const clock = new FakeClock();
  const runtime = new FakeImageGcRuntime();
  const recorder = new RecordingRecorder();
  const { logger, records: logs } = captureLogger();
  const gc = new ImageGcManager({
    runtime: runtime.api,
    policy: { ...POLICY, ...policy },
    periodMs: 5 * MIN,
    clock,
    logger,
    recorder,
    nodeRef: NODE,
  });
  return { clock, runtime, recorder, gc, logs };
}

describe('ImageGcManager', () => {
  it('refuses a policy upstream refuses', () => {
    expect(() => setup({ lowThresholdPercent: 90 })).toThrow(ImageGcError);
  });

  it('over the high mark: removes unused images least recently used first, stops at the low mark, spares in-use and pinned', async () => {
    const { runtime, gc, recorder, clock } = setup({ minAgeMs: 0 });
    runtime.add('pause', 50, { pinned: true }).add('app', 300, { inUse: true }).add('old', 100).add('older', 100);
    await gc.runOnce(); // first detection: all present images count as old (zero time); usage 0%: nothing to do
    expect(runtime.removed).toEqual([]);
    clock.step(MIN);
    runtime.add('newer', 100); // detected after the others
    runtime.inUse.add('old'); // used now: becomes more recently used than 'older'
    await gc.runOnce();
    runtime.inUse.delete('old');
    clock.step(MIN);
    // Usage 87% (≥ 85): free capacity × 20% − available = 200 − 130 = 70 bytes → one image.
    runtime.fs = { capacityBytes: 1000n, availableBytes: 130n };
    await gc.runOnce();
    expect(runtime.removed).toEqual(['older']);
    // Still over: next run frees 70 more → 'newer' (never used) before 'old' (used a minute ago).
    runtime.fs = { capacityBytes: 1000n, availableBytes: 130n };
    clock.step(MIN);
    await gc.runOnce();
    expect(runtime.removed).toEqual(['older', 'newer']);
    expect([...runtime.images.keys()].sort()).toEqual(['app', 'old', 'pause']);
    expect(recorder.events).toEqual([]);
  });

  it('frees several images in one run until the wanted bytes are freed', async () => {
    const { runtime, gc } = setup({ minAgeMs: 0 });
    runtime.add('a', 40).add('b', 40).add('c', 40).add('d', 40);
    runtime.fs = { capacityBytes: 1000n, availableBytes: 100n }; // 90%: free 100 bytes
    await gc.runOnce();
    // Equal records (present at the first detection, never used) go in id order.
    expect(runtime.removed).toEqual(['a', 'b', 'c']);
    expect([...runtime.images.keys()]).toEqual(['d']);
  });

  it('spares images younger than minAge, then reports FreeDiskSpaceFailed, and ImageGCFailed when failing again', async () => {
    const { runtime, gc, recorder, clock } = setup();
    await gc.runOnce(); // initialized with no images
    runtime.add('fresh', 500);
    runtime.fs = { capacityBytes: 1000n, availableBytes: 0n };
    await gc.runOnce();
    expect(runtime.removed).toEqual([]);
    const wanted = 'failed to garbage collect required amount of images. Wanted to free 200 bytes, but freed 0 bytes';
    expect(recorder.events).toEqual([{ ref: NODE, type: 'Warning', reason: 'FreeDiskSpaceFailed', message: wanted }]);
    clock.step(MIN);
    await gc.runOnce();
    expect(recorder.events.map((e) => e.reason)).toEqual(['FreeDiskSpaceFailed', 'FreeDiskSpaceFailed', 'ImageGCFailed']);
    expect(recorder.events[2]?.message).toBe(wanted);
    // Old enough now (first detected 2 minutes ago): removed, and the failures stop.
    clock.step(MIN);
    await gc.runOnce();
    expect(runtime.removed).toEqual(['fresh']);
    expect(recorder.events).toHaveLength(3);
  });

  it('goes on past a failed removal and reports the errors', async () => {
    const { runtime, gc, recorder } = setup({ minAgeMs: 0 });
    runtime.add('a', 100).add('b', 100);
    runtime.failRemoval.add('a');
    runtime.fs = { capacityBytes: 1000n, availableBytes: 100n };
    await gc.runOnce();
    expect(runtime.removed).toEqual(['b']);
    expect(recorder.events).toEqual([]); // first failure: logged only, as upstream
    runtime.fs = { capacityBytes: 1000n, availableBytes: 100n };
    await gc.runOnce();
    expect(recorder.events).toEqual([
      expect.objectContaining({
        reason: 'ImageGCFailed',
        message: 'wanted to free 100 bytes, but freed 0 bytes space with errors in image deletion: [remove a: device busy]',
      }),
    ]);
  });

  it('high threshold 100 disables collection (detection still runs)', async () => {
    const { runtime, gc, recorder, logs } = setup({ highThresholdPercent: 100, minAgeMs: 0 });
    runtime.add('a', 100);
    runtime.fs = { capacityBytes: 1000n, availableBytes: 0n };
    await gc.runOnce();
    expect(runtime.removed).toEqual([]);
    expect(recorder.events).toEqual([]);
    expect(gc.snapshot().has('a')).toBe(true);
    expect(logs.some((l) => l.msg === '[imageGCManager] Detected new images')).toBe(true);
  });

  it('capacity 0 is an InvalidDiskCapacity event', async () => {
    const { runtime, gc, recorder } = setup();
    runtime.fs = { capacityBytes: 0n, availableBytes: 0n };
    await gc.runOnce();
    expect(recorder.events).toEqual([
      { ref: NODE, type: 'Warning', reason: 'InvalidDiskCapacity', message: 'invalid capacity 0 on image filesystem' },
    ]);
  });

  it('a failed image list leaves the records and retries detection as the first one', async () => {
    const { runtime, gc } = setup({ minAgeMs: 0 });
    runtime.add('a', 10);
    runtime.listError = new Error('runtime down');
    await gc.runOnce();
    expect(gc.snapshot().size).toBe(0);
    runtime.listError = undefined;
    await gc.runOnce();
    expect(gc.snapshot().get('a')?.firstDetected).toBe(0);
  });
});
