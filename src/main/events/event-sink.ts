/**
 * Writes recorded events to the apiserver (client-go's broadcaster +
 * recordToSink): a bounded queue (1000, newer events dropped and counted when
 * full, as DropIfChannelFull), the EventCorrelator, then a create or, for a
 * repeat, a patch of count and lastTimestamp; a patch that finds no event
 * creates it. A write that could not reach the apiserver is retried up to 12
 * times, 10 s apart (the first wait randomised), then dropped; one the apiserver
 * answered with an error is dropped at once. One writer at a time; callers never wait.
 */
import type { Logger } from 'pino';
import type { Event } from '../../api/cluster.js';
import type { Clock } from '../../common/clock.js';
import { ApiStatusError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { EventCorrelator } from './event-correlator.js';
import type { EventSink } from './event-recorder.js';
import { isNotFound, type RestClient } from '../apiserver/rest-client.js';

export interface ApiEventSinkOptions {
  client: RestClient;
  clock: Clock;
  logger: Logger;
  signal: AbortSignal;
  maxQueued?: number;
  maxTries?: number;
  retryDelayMs?: number;
  random?: () => number;
}

export class ApiEventSink implements EventSink {
  private readonly queue: Event[] = [];
  private readonly correlator: EventCorrelator;
  private draining = false;
  private seq = 0;
  private idleWaiters: (() => void)[] = [];
  /** Events dropped because the queue was full, or after their last failed try. */
  dropped = 0;
  written = 0;

  constructor(private readonly options: Readonly<ApiEventSinkOptions>) {
    this.correlator = new EventCorrelator({ clock: options.clock, nameOf: (e) => this.eventName(e) });
  }

  add(event: Event): void {
    if (this.options.signal.aborted) return;
    if (this.queue.length >= (this.options.maxQueued ?? 1000)) {
      if (this.dropped++ % 100 === 0) this.options.logger.warn({ dropped: this.dropped }, 'Event queue is full; dropping events');
      return;
    }
    // Named when recorded, as upstream's recorder does, so repeats can patch it by name.
    if (!event.metadata?.name) event.metadata = { ...event.metadata, name: this.eventName(event) };
    this.queue.push(event);
    if (!this.draining) this.drain().catch((err: unknown) => this.options.logger.error({ err }, 'Event sink drain failed'));
  }

  /** Resolves once the queue is empty and nothing is being written (tests, shutdown). */
  idle(): Promise<void> {
    if (!this.draining && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0 && !this.options.signal.aborted) {
        const result = this.correlator.correlate(this.queue.shift()!);
        if (result.kind === 'skip') continue;
        await this.writeWithRetries(result.kind, result.event);
      }
    } finally {
      this.draining = false;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private eventName(e: Event): string {
    const nanos = BigInt(this.options.clock.now()) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    return `${e.involvedObject.name ?? 'unknown'}.${nanos.toString(16)}`;
  }

  private async writeWithRetries(kind: 'create' | 'update', event: Event): Promise<void> {
    const maxTries = this.options.maxTries ?? 12;
    const delay = this.options.retryDelayMs ?? 10_000;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.write(kind, event);
        this.written++;
        return;
      } catch (err) {
        // Upstream recordToSink: any answer from the apiserver (a StatusError, 4xx or 5xx) drops the event;
        // only a failure to reach it is retried.
        const permanent = err instanceof ApiStatusError;
        if (permanent || attempt >= maxTries || this.options.signal.aborted) {
          this.dropped++;
          this.options.logger.warn(
            { reason: event.reason, object: event.involvedObject.name, attempts: attempt, err: errorMessage(err) },
            'Could not write event; dropping it',
          );
          return;
        }
        if (attempt === 1) this.options.logger.info({ err: errorMessage(err) }, 'Unable to write event; will retry');
        const wait = attempt === 1 ? Math.floor((this.options.random ?? Math.random)() * delay) : delay;
        await this.options.clock.sleep(wait, this.options.signal).catch(() => undefined);
      }
    }
  }

  private async write(kind: 'create' | 'update', event: Event): Promise<void> {
    const ns = event.metadata?.namespace ?? 'default';
    const base = `/api/v1/namespaces/${encodeURIComponent(ns)}/events`;
    if (kind === 'update') {
      try {
        const patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
        await this.options.client.patch(`${base}/${encodeURIComponent(event.metadata?.name ?? '')}`, patch, 'strategic', {
          signal: this.options.signal,
        });
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    await this.options.client.create(base, { apiVersion: 'v1', kind: 'Event', ...event }, { signal: this.options.signal });
  }
}
