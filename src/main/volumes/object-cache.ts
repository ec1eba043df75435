/**
 * ConfigMaps and Secrets the node's pods reference (upstream
 * pkg/kubelet/util/manager watch_based_manager.go, the default
 * "Watch" change-detection strategy): one reflector per referenced object,
 * listing and watching it by `metadata.name`, started when the first pod
 * registers it and stopped when the last one goes. A get never calls the
 * apiserver: it reads the reflector's store, waiting up to 1 s for the first
 * LIST. An immutable object stops being watched once seen. Listeners hear of
 * every change after the first listing (the volume manager then refreshes
 * the volumes that read the object at once, instead of at the next pod sync).
 *
 * The watch by name is what the Node authorizer lets a node do for objects its
 * pods reference.
 */
import type { Logger } from 'pino';
import type { ConfigMap, Secret } from '../../api/core-v1.js';
import type { Clock } from '../../common/clock.js';
import { ApiStatusError } from '../../common/errors.js';
import { Reflector } from '../apiserver/reflector.js';
import type { RestClient } from '../apiserver/rest-client.js';
import type { ObjectKind, ObjectRef, ObjectSource } from './volume-plugin.js';

/** upstream: wait.PollImmediate(10ms, 1s, hasSynced). */
export const SYNC_WAIT_MS = 1000;
const SYNC_POLL_MS = 10;

const RESOURCE: Record<ObjectKind, string> = { configmap: 'configmaps', secret: 'secrets' };

type ApiObject = (ConfigMap | Secret) & { immutable?: boolean };

interface Item {
  refs: number;
  reflector: Reflector<ApiObject>;
  abort: AbortController;
  /** The object, once seen as immutable (its watch is stopped). */
  frozen?: ApiObject;
}

export interface ObjectCacheOptions {
  client: Pick<RestClient, 'get' | 'watch'>;
  clock: Clock;
  logger: Logger;
  /** The agent's stop signal: every watch ends with it. */
  signal: AbortSignal;
}

const key = (r: ObjectRef) => `${r.kind}/${r.namespace}/${r.name}`;

export class ObjectCache implements ObjectSource {
  private readonly items = new Map<string, Item>();
  private readonly listeners: ((ref: ObjectRef) => void)[] = [];

  constructor(private readonly options: Readonly<ObjectCacheOptions>) {}

  register(ref: ObjectRef): void {
    const k = key(ref);
    let item = this.items.get(k);
    if (!item) {
      const abort = new AbortController();
      /** resourceVersions after the first listing; a later difference is a change. */
      let seen: string | undefined;
      const reflector = new Reflector<ApiObject>({
        client: this.options.client,
        path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/${RESOURCE[ref.kind]}`,
        fieldSelector: `metadata.name=${ref.name}`,
        clock: this.options.clock,
        logger: this.options.logger,
        what: `Watching ${ref.kind} ${ref.namespace}/${ref.name}`,
        onSync: (store) => {
          const version = [...store.values()].map((o) => o.metadata?.resourceVersion ?? '').join(',');
          const changed = seen !== undefined && version !== seen;
          seen = version;
          if (changed) for (const l of this.listeners) l(ref);
        },
      });
      item = { refs: 0, reflector, abort };
      this.items.set(k, item);
      // run() retries and logs its own failures; a rejection here would be a bug, logged.
      reflector
        .run(AbortSignal.any([abort.signal, this.options.signal]))
        .catch((err: unknown) => this.options.logger.error({ err }, `Watching ${k} stopped`));
    }
    item.refs++;
  }

  unregister(ref: ObjectRef): void {
    const k = key(ref);
    const item = this.items.get(k);
    if (!item) return;
    item.refs--;
    if (item.refs <= 0) {
      item.abort.abort();
      this.items.delete(k);
    }
  }

  onChange(listener: (ref: ObjectRef) => void): void {
    this.listeners.push(listener);
  }

  /** Objects watched now (tests, metrics). */
  watched(): string[] {
    return [...this.items].filter(([, i]) => !i.frozen).map(([k]) => k);
  }

  get(ref: ObjectRef & { kind: 'configmap' }): Promise<ConfigMap>;
  get(ref: ObjectRef & { kind: 'secret' }): Promise<Secret>;
  async get(ref: ObjectRef): Promise<ConfigMap | Secret> {
    const item = this.items.get(key(ref));
    if (!item) throw new Error(`object ${JSON.stringify(ref.namespace)}/${JSON.stringify(ref.name)} not registered`);
    if (item.frozen) return item.frozen;
    const deadline = this.options.clock.now() + SYNC_WAIT_MS;
    while (!item.reflector.synced) {
      if (this.options.clock.now() >= deadline) {
        const cause = item.reflector.lastError ? `: ${item.reflector.lastError.message}` : ': timed out waiting for the condition';
        throw new Error(`failed to sync ${ref.kind} cache${cause}`);
      }
      await this.options.clock.sleep(SYNC_POLL_MS);
    }
    const obj = [...item.reflector.store.values()].find((x) => x.metadata?.name === ref.name);
    if (!obj) throw new ApiStatusError(`${ref.kind} ${JSON.stringify(ref.name)} not found`, 404, 'NotFound');
    if (obj.immutable === true) {
      item.frozen = obj;
      item.abort.abort();
      this.options.logger.debug({ object: key(ref) }, 'Stopped watching: the object is immutable');
    }
    return obj;
  }
}
