/**
 * client-go's EventCorrelator (tools/record/events_cache.go), the part of the
 * event recorder that keeps a chatty kubelet from flooding the apiserver:
 * 1. aggregation: more than `maxSimilar` events that differ only in message,
 *    for one object and reason within `aggregateWindowMs`, become one event
 *    "(combined from similar events): <latest message>";
 * 2. deduplication: a repeat of an identical event updates the first one
 *    (count + 1, lastTimestamp) instead of creating another;
 * 3. spam filter: a token bucket per source and object (burst 25, one token
 *    every 5 minutes) drops events beyond it.
 * Pure apart from the injected clock; caches are bounded LRUs.
 */
import type { Event, ObjectReference } from '../../api/cluster.js';
import type { Clock } from '../../common/clock.js';
import { TokenBucket } from '../../common/token-bucket.js';

export interface CorrelatorOptions {
  clock: Clock;
  /** Names the combined event of an aggregation. Default `<object>.<hex ns of the clock>`. */
  nameOf?: EventNamer;
  maxSimilar?: number;
  aggregateWindowMs?: number;
  spamBurst?: number;
  spamQps?: number;
  cacheSize?: number;
}

export type CorrelationResult = { kind: 'create'; event: Event } | { kind: 'update'; event: Event } | { kind: 'skip' };

/** A Map used as an LRU: get() refreshes, set() evicts the oldest beyond `limit`. */
class Lru<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly limit: number) {}
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.limit) this.m.delete(this.m.keys().next().value!);
  }
}

const refKey = (o: ObjectReference | undefined) => [o?.kind, o?.namespace, o?.name, o?.uid, o?.apiVersion].join('\u0000');
const sourceKey = (e: Event) => [e.source?.component, e.source?.host].join('\u0000');
/** Upstream getEventKey: everything that makes two events the same event, message and fieldPath included. */
const eventKey = (e: Event) =>
  [sourceKey(e), refKey(e.involvedObject), e.involvedObject.fieldPath, e.type, e.reason, e.message].join('\u0000');
/** Upstream EventAggregatorByReasonFunc: the aggregate key (no message) and the local key (the message). */
const aggregateKey = (e: Event) =>
  [sourceKey(e), refKey(e.involvedObject), e.type, e.reason, e.reportingComponent, e.reportingInstance].join('\u0000');

interface Aggregate {
  messages: Set<string>;
  lastSeen: number;
}

/** Names an event as upstream's recorder does: `<object>.<hex nanoseconds>`. */
export type EventNamer = (e: Event) => string;

export class EventCorrelator {
  private readonly clock: Clock;
  private readonly maxSimilar: number;
  private readonly windowMs: number;
  private readonly aggregates: Lru<Aggregate>;
  /** Full event key → the event as last sent (its name, count, first timestamp). */
  private readonly seen: Lru<Event>;
  private readonly spam: Lru<TokenBucket>;
  private readonly spamBurst: number;
  private readonly spamQps: number;

  private readonly nameOf: EventNamer;

  constructor(options: CorrelatorOptions) {
    this.clock = options.clock;
    this.nameOf =
      options.nameOf ?? ((e) => `${e.involvedObject.name ?? 'unknown'}.${(BigInt(options.clock.now()) * 1_000_000n).toString(16)}`);
    this.maxSimilar = options.maxSimilar ?? 10;
    this.windowMs = options.aggregateWindowMs ?? 600_000;
    this.spamBurst = options.spamBurst ?? 25;
    this.spamQps = options.spamQps ?? 1 / 300;
    const size = options.cacheSize ?? 4096;
    this.aggregates = new Lru(size);
    this.seen = new Lru(size);
    this.spam = new Lru(size);
  }

  /**
   * Decides what to send for a newly recorded event (count 1, named, timestamps
   * set), in upstream's order: aggregate, observe (dedupe: counts every
   * occurrence), then the spam filter, which may skip it.
   */
  correlate(input: Event): CorrelationResult {
    const { event, key } = this.aggregate(input);
    const prior = this.seen.get(key);
    const observed: Event = prior
      ? {
          ...event,
          metadata: { ...event.metadata, name: prior.metadata?.name },
          count: (prior.count ?? 1) + 1,
          firstTimestamp: prior.firstTimestamp,
        }
      : event;
    this.seen.set(key, observed);
    const spamKey = `${sourceKey(observed)}\u0000${refKey(observed.involvedObject)}`;
    let bucket = this.spam.get(spamKey);
    if (!bucket) {
      bucket = new TokenBucket(this.spamQps, this.spamBurst, this.clock);
      this.spam.set(spamKey, bucket);
    }
    if (!bucket.tryTake()) return { kind: 'skip' };
    return prior ? { kind: 'update', event: observed } : { kind: 'create', event: observed };
  }

  /** Upstream EventAggregate: the event itself, or once too many similar ones were seen, one combined event. */
  private aggregate(event: Event): { event: Event; key: string } {
    const now = this.clock.now();
    const key = aggregateKey(event);
    let agg = this.aggregates.get(key);
    if (!agg || now - agg.lastSeen > this.windowMs) agg = { messages: new Set(), lastSeen: now };
    agg.messages.add(event.message ?? '');
    agg.lastSeen = now;
    this.aggregates.set(key, agg);
    if (agg.messages.size < this.maxSimilar) return { event, key: eventKey(event) };
    // Do not grow the set of messages beyond the maximum.
    agg.messages.delete(agg.messages.values().next().value!);
    const combined: Event = {
      ...event,
      metadata: { namespace: event.metadata?.namespace, name: this.nameOf(event) },
      count: 1,
      message: `(combined from similar events): ${event.message ?? ''}`,
    };
    return { event: combined, key };
  }
}
