import { describe, expect, it } from 'vitest';
import type { Event, ObjectReference } from '../../src/api/cluster.js';
import { EventCorrelator, type CorrelationResult } from '../../src/main/events/event-correlator.js';
import { FakeClock } from '../fakes/fake-clock.js';

const NODE: ObjectReference = { kind: 'Node', name: 'node1', uid: 'node1', namespace: '' };
const POD: ObjectReference = { kind: 'Pod', apiVersion: 'v1', namespace: 'ns1', name: 'web-0', uid: 'pod-uid' };

let seq = 0;
/** An event as upstream's recorder makes it: unique name, count 1, both timestamps now. */
function ev(clock: FakeClock, over: Partial<Event> = {}): Event {
  const now = new Date(clock.now()).toISOString();
  return {
    metadata: { name: `obj.${(++seq).toString(16)}`, namespace: 'default' },
    involvedObject: NODE,
    reason: 'NodeReady',
    message: 'Node node1 status is now: NodeReady',
    type: 'Normal',
    source: { component: 'kubelet', host: 'node1' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    ...over,
  };
}

const kinds = (rs: CorrelationResult[]) => rs.map((r) => r.kind);
const ev$ = (r: CorrelationResult) => (r as { event: Event }).event;

// client-go tools/record/events_cache.go: EventCorrelate = aggregate, then
// observe (dedupe), then the spam filter (25 per source+object, 1 per 5 min).
describe('EventCorrelator: deduplication', () => {
  it('a repeat updates the first event: same name, count + 1, first timestamp kept', () => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    const first = c.correlate(ev(clock));
    expect(first.kind).toBe('create');
    const name = ev$(first).metadata.name;
    const firstTs = ev$(first).firstTimestamp;
    for (const count of [2, 3, 4]) {
      clock.step(60_000);
      const later = ev(clock);
      const r = c.correlate(later);
      expect(r.kind).toBe('update');
      expect(ev$(r)).toMatchObject({ count, firstTimestamp: firstTs, lastTimestamp: later.lastTimestamp, message: later.message });
      expect(ev$(r).metadata.name).toBe(name);
    }
  });

  it.each<{ name: string; other: Partial<Event> }>([
    { name: 'another message', other: { message: 'Node node1 status is now: NodeNotReady' } },
    { name: 'another reason', other: { reason: 'NodeNotReady' } },
    { name: 'another type', other: { type: 'Warning' } },
    { name: 'another object', other: { involvedObject: { ...NODE, name: 'node2', uid: 'node2' } } },
    { name: 'another source host', other: { source: { component: 'kubelet', host: 'node2' } } },
    // getEventKey includes involvedObject.fieldPath: two containers of one pod are two events.
    {
      name: 'another container of the same pod (fieldPath)',
      other: { involvedObject: { ...POD, fieldPath: 'spec.containers{b}' } },
    },
  ])('$name is a new event', ({ other }) => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    const base: Partial<Event> =
      other.involvedObject?.kind === 'Pod' ? { involvedObject: { ...POD, fieldPath: 'spec.containers{a}' } } : {};
    expect(c.correlate(ev(clock, base)).kind).toBe('create');
    expect(c.correlate(ev(clock, other)).kind).toBe('create');
  });
});

describe('EventCorrelator: aggregation of similar events', () => {
  const similar = (clock: FakeClock, i: number) => ev(clock, { reason: 'FailedMount', type: 'Warning', message: `volume v${i} failed` });

  it('the 10th distinct message for one object and reason is sent as a combined event', () => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    const rs = Array.from({ length: 10 }, (_, i) => c.correlate(similar(clock, i + 1)));
    expect(kinds(rs)).toEqual(Array(10).fill('create'));
    expect(rs.slice(0, 9).map((r) => ev$(r).message)).toEqual(Array.from({ length: 9 }, (_, i) => `volume v${i + 1} failed`));
    expect(ev$(rs[9]).message).toBe('(combined from similar events): volume v10 failed');
  });

  // The aggregate event's cache key is the aggregate key (without the message), so
  // later similar events update the one combined event instead of creating more.
  it('later similar events update the one combined event', () => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    const rs = Array.from({ length: 14 }, (_, i) => c.correlate(similar(clock, i + 1)));
    const combined = ev$(rs[9]);
    for (const [i, r] of rs.slice(10).entries()) {
      expect(r.kind).toBe('update');
      expect(ev$(r).metadata.name).toBe(combined.metadata.name);
      expect(ev$(r).count).toBe(i + 2);
      expect(ev$(r).message).toBe(`(combined from similar events): volume v${i + 11} failed`);
    }
  });

  it.each([
    // interval > 600 s since the last similar event starts a fresh record
    { gapMs: 600_000, aggregated: true },
    { gapMs: 600_001, aggregated: false },
  ])('a gap of $gapMs ms before the 10th message → aggregated: $aggregated', ({ gapMs, aggregated }) => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    for (let i = 1; i <= 9; i++) c.correlate(similar(clock, i));
    clock.step(gapMs);
    const r = c.correlate(similar(clock, 10));
    expect(ev$(r).message!.startsWith('(combined from similar events): ')).toBe(aggregated);
  });

  it('similar events on other objects or reasons do not count', () => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    for (let i = 1; i <= 9; i++) c.correlate(similar(clock, i));
    const other = c.correlate(ev(clock, { reason: 'FailedMount', type: 'Warning', message: 'x', involvedObject: POD }));
    const otherReason = c.correlate(ev(clock, { reason: 'FailedAttachVolume', type: 'Warning', message: 'y' }));
    expect([ev$(other).message, ev$(otherReason).message]).toEqual(['x', 'y']);
  });
});

describe('EventCorrelator: spam filter', () => {
  it('25 events per source and object, then one per 5 minutes; other objects unaffected', () => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    const rs = Array.from({ length: 30 }, () => c.correlate(ev(clock)));
    expect(kinds(rs).filter((k) => k !== 'skip')).toHaveLength(25);
    expect(kinds(rs).slice(25)).toEqual(Array(5).fill('skip'));
    expect(c.correlate(ev(clock, { involvedObject: POD })).kind).toBe('create');
    clock.step(299_999);
    expect(c.correlate(ev(clock)).kind).toBe('skip');
    clock.step(1);
    expect(c.correlate(ev(clock)).kind).toBe('update');
    expect(c.correlate(ev(clock)).kind).toBe('skip');
  });

  // Upstream observes (counts) before filtering: the count of the next event that
  // passes includes the occurrences the filter dropped.
  it('the count includes occurrences the filter skipped', () => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock });
    for (let i = 0; i < 30; i++) c.correlate(ev(clock));
    clock.step(300_000);
    const r = c.correlate(ev(clock));
    expect(r.kind).toBe('update');
    expect(ev$(r).count).toBe(31);
  });
});

describe('EventCorrelator: bounded caches', () => {
  it('least recently used entries are evicted beyond cacheSize', () => {
    const clock = new FakeClock();
    const c = new EventCorrelator({ clock, cacheSize: 2 });
    const on = (name: string) => ev(clock, { involvedObject: { ...NODE, name, uid: name } });
    expect(kinds([c.correlate(on('a')), c.correlate(on('b')), c.correlate(on('a'))])).toEqual(['create', 'create', 'update']);
    // a was used last, so c evicts b.
    expect(c.correlate(on('c')).kind).toBe('create');
    const again = c.correlate(on('a'));
    expect([again.kind, ev$(again).count]).toEqual(['update', 3]);
    expect(c.correlate(on('b')).kind).toBe('create');
  });
});
