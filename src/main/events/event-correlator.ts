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

interface Aggregate {
  messages: Set<string>;
  lastSeen: number;
}

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

  constructor(o: CorrelatorOptions) {
    this.clock = o.clock;
    this.maxSimilar = o.maxSimilar ?? 10;
    this.windowMs = o.aggregateWindowMs ?? 600_000;
    this.spamBurst = o.spamBurst ?? 25;
    this.spamQps = o.spamQps ?? 1 / 300;
    const size = o.cacheSize ?? 4096;
    this.aggregates = new Lru(size);
    this.seen = new Lru(size);
    this.spam = new Lru(size);
  }

  /** Decides what to send for a newly recorded event (count 1, timestamps set by the caller). */
  correlate(input: Event): CorrelationResult {
    const spamKey = `${sourceKey(input)}\u0000${refKey(input.involvedObject)}`;
    let bucket = this.spam.get(spamKey);
    if (!bucket) {
      bucket = new TokenBucket(this.spamQps, this.spamBurst, this.clock);
      this.spam.set(spamKey, bucket);
    }
    if (!bucket.tryTake()) return { kind: 'skip' };

    const event = this.aggregate(input);
    const key = [sourceKey(event), refKey(event.involvedObject), event.type, event.reason, event.message].join('\u0000');
    const prior = this.seen.get(key);
    if (prior) {
      const updated: Event = {
        ...event,
        metadata: { ...event.metadata, name: prior.metadata?.name },
        count: (prior.count ?? 1) + 1,
        firstTimestamp: prior.firstTimestamp,
      };
      this.seen.set(key, updated);
      return { kind: 'update', event: updated };
    }
    this.seen.set(key, event);
    return { kind: 'create', event };
  }

  private aggregate(event: Event): Event {
    const now = this.clock.now();
    const key = [sourceKey(event), refKey(event.involvedObject), event.type, event.reason].join('\u0000');
    let agg = this.aggregates.get(key);
    if (!agg || now - agg.lastSeen > this.windowMs) agg = { messages: new Set(), lastSeen: now };
    agg.messages.add(event.message ?? '');
    agg.lastSeen = now;
    this.aggregates.set(key, agg);
    if (agg.messages.size < this.maxSimilar) return event;
    return { ...event, message: `(combined from similar events): ${event.message ?? ''}` };
  }
}
