/**
 * A reflector (client-go cache.Reflector) over one list/watch endpoint: LIST,
 * then WATCH from the list's resourceVersion (with bookmarks, for a random
 * 5–10 min server timeout) and watch again from the last version seen when
 * the stream ends. A 410 (Gone / Expired) relists; any other failure retries
 * with backoff (800 ms doubling to 30 s, back to 800 ms when the previous
 * backoff began over 2 min ago: client-go's ExponentialBackoffManager), logged
 * once per interval. The store keeps the last good state while it retries.
 *
 * The store is keyed by metadata.uid. `onSync` runs after each LIST and after
 * each network chunk of watch events that changed something.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { ApiStatusError } from '../../common/errors.js';
import { FailureLog } from '../../common/failure-log.js';
import type { RestClient, WatchEvent } from './rest-client.js';

const MIN_BACKOFF_MS = 800;
const MAX_BACKOFF_MS = 30_000;
/** client-go's backoffResetDuration: a backoff that began longer ago than this no longer counts. */
const BACKOFF_RESET_MS = 120_000;
const MIN_WATCH_TIMEOUT_S = 300;

interface Meta {
  metadata?: { uid?: string; resourceVersion?: string };
}

interface List<T> {
  metadata?: { resourceVersion?: string };
  items?: T[] | null;
}

class Gone extends Error {}

export interface ReflectorOptions<T> {
  client: Pick<RestClient, 'get' | 'watch'>;
  /** The collection, e.g. /api/v1/namespaces/ns/configmaps. */
  path: string;
  fieldSelector?: string;
  clock: Clock;
  logger: Logger;
  /** What is watched, for log lines ("Watching configmap ns/name"). */
  what: string;
  onSync(store: ReadonlyMap<string, T>): void;
  random?: () => number;
}

export class Reflector<T extends Meta> {
  readonly store = new Map<string, T>();
  private resourceVersion = '';
  private readonly failures: FailureLog;
  /** The last LIST or WATCH failure, until the next success. */
  lastError: Error | undefined;
  /** A LIST has completed. */
  synced = false;

  constructor(private readonly options: Readonly<ReflectorOptions<T>>) {
    this.failures = new FailureLog(options.logger, options.clock, options.what, 30_000);
  }

  /** Runs until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let backoff = MIN_BACKOFF_MS;
    let lastBackoffAt = -Infinity;
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === '') await this.list(signal);
        await this.watch(signal);
        this.failures.success();
        this.lastError = undefined;
        backoff = MIN_BACKOFF_MS;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof Gone || (err instanceof ApiStatusError && err.status === 410)) {
          this.options.logger.info({ resourceVersion: this.resourceVersion }, `${this.options.what}: the watch expired; relisting`);
          this.resourceVersion = '';
          continue;
        }
        this.lastError = err as Error;
        const now = this.options.clock.now();
        if (now - lastBackoffAt > BACKOFF_RESET_MS) backoff = MIN_BACKOFF_MS;
        lastBackoffAt = now;
        this.failures.failure(err, { retryInMs: backoff });
        await this.options.clock.sleep(backoff, signal).catch(() => undefined);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const list = await this.options.client.get<List<T>>(this.options.path, {
      query: { fieldSelector: this.options.fieldSelector },
      signal,
    });
    this.store.clear();
    for (const item of list.items ?? []) this.store.set(item.metadata?.uid ?? '', item);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.synced = true;
    this.lastError = undefined;
    this.options.onSync(this.store);
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_S * (1 + (this.options.random ?? Math.random)()));
    let changed = false;
    const onEvent = (e: WatchEvent) => {
      if (e.type === 'ERROR') {
        // Deliver what this chunk already changed before the watch ends.
        if (changed) {
          changed = false;
          this.options.onSync(this.store);
        }
        const status = e.object as { code?: number; reason?: string; message?: string };
        if (status.code === 410) throw new Gone(status.message ?? 'resource version too old');
        throw new ApiStatusError(
          `watch ${this.options.path}: ${status.code ?? '?'} ${status.reason ?? ''}: ${status.message ?? ''}`,
          status.code ?? 500,
          status.reason ?? '',
        );
      }
      const obj = e.object as unknown as T;
      const rv = obj.metadata?.resourceVersion;
      if (rv) this.resourceVersion = rv;
      if (e.type === 'BOOKMARK') return;
      const uid = obj.metadata?.uid ?? '';
      if (e.type === 'DELETED') this.store.delete(uid);
      else this.store.set(uid, obj);
      changed = true;
    };
    await this.options.client.watch(
      this.options.path,
      { fieldSelector: this.options.fieldSelector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      onEvent,
      {
        signal,
        onChunkEnd: () => {
          if (!changed) return;
          changed = false;
          this.options.onSync(this.store);
        },
      },
    );
  }
}
