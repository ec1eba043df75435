/**
 * The apiserver pod source (upstream config/apiserver.go: a reflector over
 * pods with fieldSelector spec.nodeName=<node>, feeding an UndeltaStore that
 * sends the complete list as a SET on every change).
 *
 * Contract:
 * - Starts when `ready()` resolves (the node is registered), then LISTs and
 *   sends a SET, then WATCHes from the list's resourceVersion with bookmarks,
 *   for a random 5–10 min server timeout, and watches again from the last
 *   resourceVersion seen when the stream ends.
 * - A watch ERROR 410 (Gone / Expired) or a 410 answer relists from scratch;
 *   any other failure retries with backoff (800 ms doubling to 30 s) and is
 *   logged once per interval. Running pods are untouched while it retries: the
 *   last SET stays in force.
 * - Watch events are folded into the store and one SET is sent per network
 *   chunk of events (not per event), so a burst of 1000 changes costs a
 *   handful of merges, not 1000.
 */
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { ApiStatusError } from '../../common/errors.js';
import { FailureLog } from '../../common/failure-log.js';
import type { RestClient, WatchEvent } from '../apiserver/rest-client.js';
import { API_SOURCE, type PodSource, type SourceChannel } from './types.js';

const MIN_BACKOFF_MS = 800;
const MAX_BACKOFF_MS = 30_000;
const MIN_WATCH_TIMEOUT_S = 300;

export interface ApiSourceOptions {
  client: RestClient;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  /** Resolves when the source may start (upstream waits for the node to be synced/registered). */
  ready: () => Promise<void>;
  random?: () => number;
}

interface PodList {
  metadata?: { resourceVersion?: string };
  items: Pod[];
}

class Gone extends Error {}

export class ApiSource implements PodSource {
  readonly name = API_SOURCE;
  private readonly store = new Map<string, Pod>();
  private resourceVersion = '';
  private readonly failures: FailureLog;
  private out: SourceChannel = () => undefined;
  /** Completed lists and watch streams (for tests and metrics). */
  lists = 0;
  watches = 0;

  constructor(private readonly o: ApiSourceOptions) {
    this.failures = new FailureLog(o.logger, o.clock, 'Watching apiserver pods', 30_000);
  }

  start(signal: AbortSignal, out: SourceChannel): void {
    this.out = out;
    // run() retries and logs its own failures; a rejection here is a bug, logged.
    this.run(signal).catch((err: unknown) => this.o.logger.error({ err }, 'Apiserver pod source stopped'));
  }

  private get selector(): string {
    return `spec.nodeName=${this.o.nodeName}`;
  }

  private send(): void {
    this.out({ op: 'SET', pods: [...this.store.values()].map((p) => structuredClone(p)) });
  }

  private async run(signal: AbortSignal): Promise<void> {
    try {
      await this.o.ready();
    } catch {
      return;
    }
    this.o.logger.info({ fieldSelector: this.selector }, 'Watching apiserver');
    let backoff = MIN_BACKOFF_MS;
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === '') await this.list(signal);
        await this.watch(signal);
        this.failures.success();
        backoff = MIN_BACKOFF_MS;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof Gone || (err instanceof ApiStatusError && err.status === 410)) {
          this.o.logger.info({ resourceVersion: this.resourceVersion }, 'Watch of pods expired; relisting');
          this.resourceVersion = '';
          continue;
        }
        this.failures.failure(err, { retryInMs: backoff });
        await this.o.clock.sleep(backoff, signal).catch(() => undefined);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const list = await this.o.client.get<PodList>('/api/v1/pods', { query: { fieldSelector: this.selector }, signal });
    this.store.clear();
    for (const pod of list.items ?? []) this.store.set(pod.metadata.uid ?? '', pod);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.lists++;
    this.send();
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_S * (1 + (this.o.random ?? Math.random)()));
    let changed = false;
    const onEvent = (e: WatchEvent) => {
      if (e.type === 'ERROR') {
        // Deliver what this chunk already changed before the watch ends.
        if (changed) {
          changed = false;
          this.send();
        }
        const status = e.object as { code?: number; reason?: string; message?: string };
        if (status.code === 410) throw new Gone(status.message ?? 'resource version too old');
        throw new ApiStatusError(
          `watch pods: ${status.code ?? '?'} ${status.reason ?? ''}: ${status.message ?? ''}`,
          status.code ?? 500,
          status.reason ?? '',
        );
      }
      const pod = e.object as unknown as Pod;
      const rv = pod.metadata?.resourceVersion;
      if (rv) this.resourceVersion = rv;
      if (e.type === 'BOOKMARK') return;
      const uid = pod.metadata.uid ?? '';
      if (e.type === 'DELETED') this.store.delete(uid);
      else this.store.set(uid, pod);
      changed = true;
    };
    await this.o.client.watch(
      '/api/v1/pods',
      { fieldSelector: this.selector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      onEvent,
      {
        signal,
        onChunkEnd: () => {
          if (!changed) return;
          changed = false;
          this.send();
        },
      },
    );
    this.watches++;
  }
}
