import { ApiStatusError, ApiUnreachableError } from '../../src/common/errors.js';
import type { RequestOptions, RestClient, WatchEvent } from '../../src/main/apiserver/rest-client.js';

type Obj = { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string }; [k: string]: unknown };

interface Watcher {
  path: string;
  name?: string;
  onEvent: (e: WatchEvent) => void;
  onChunkEnd?: () => void;
}

/**
 * An in-memory apiserver for the REST calls list/watch users make: collections
 * by path, a metadata.name field selector, watches fed by put/remove, and a
 * handler for POSTs. Counts LIST and WATCH requests.
 */
export class FakeApiClient implements Pick<RestClient, 'get' | 'watch' | 'create'> {
  private readonly collections = new Map<string, Map<string, Obj>>();
  private readonly watchers = new Set<Watcher>();
  private rv = 1;
  lists = 0;
  watches = 0;
  /** Makes LISTs fail with this status while set. */
  listFailure: number | undefined;
  onCreate: (path: string, body: unknown) => unknown = () => {
    throw new ApiStatusError('POST: 404 NotFound', 404, 'NotFound');
  };

  put(path: string, obj: Obj): void {
    const c = this.collections.get(path) ?? new Map<string, Obj>();
    this.collections.set(path, c);
    const existed = c.has(obj.metadata.name);
    const stored = { ...obj, metadata: { uid: `uid-${obj.metadata.name}`, ...obj.metadata, resourceVersion: String(++this.rv) } };
    c.set(obj.metadata.name, stored);
    this.emit(path, existed ? 'MODIFIED' : 'ADDED', stored);
  }

  remove(path: string, name: string): void {
    const obj = this.collections.get(path)?.get(name);
    if (!obj) return;
    this.collections.get(path)!.delete(name);
    this.emit(path, 'DELETED', { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } });
  }

  openWatches(): number {
    return this.watchers.size;
  }

  private emit(path: string, type: WatchEvent['type'], obj: Obj): void {
    for (const w of this.watchers) {
      if (w.path !== path || (w.name && w.name !== obj.metadata.name)) continue;
      w.onEvent({ type, object: obj });
      w.onChunkEnd?.();
    }
  }

  private static nameOf(fieldSelector: unknown): string | undefined {
    return typeof fieldSelector === 'string' ? /metadata\.name=([^,]+)/.exec(fieldSelector)?.[1] : undefined;
  }

  async get<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    this.lists++;
    if (this.listFailure) throw new ApiStatusError(`GET ${path}: ${this.listFailure}`, this.listFailure, 'Forbidden');
    const name = FakeApiClient.nameOf(opts.query?.fieldSelector);
    const items = [...(this.collections.get(path)?.values() ?? [])].filter((o) => !name || o.metadata.name === name);
    return { metadata: { resourceVersion: String(this.rv) }, items } as T;
  }

  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; onChunkEnd?: () => void } = {},
  ): Promise<void> {
    this.watches++;
    const w: Watcher = { path, name: FakeApiClient.nameOf(query.fieldSelector), onEvent, onChunkEnd: opts.onChunkEnd };
    this.watchers.add(w);
    await new Promise<void>((_resolve, reject) => {
      const stop = () => {
        this.watchers.delete(w);
        reject(new ApiUnreachableError(`WATCH ${path}: aborted`));
      };
      if (opts.signal?.aborted) return stop();
      opts.signal?.addEventListener('abort', stop, { once: true });
    });
  }

  async create<T>(path: string, body: unknown): Promise<T> {
    return this.onCreate(path, body) as T;
  }
}
