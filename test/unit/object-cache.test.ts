import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/common/clock.js';
import { silentLogger } from '../../src/common/logger.js';
import { isNotFound } from '../../src/main/apiserver/rest-client.js';
import { ObjectCache } from '../../src/main/volumes/object-cache.js';
import { FakeApiClient } from '../fakes/fake-api-client.js';
import { pollUntil } from '../helpers/poll.js';

const CM = '/api/v1/namespaces/ns/configmaps';
const ref = (name: string) => ({ kind: 'configmap' as const, namespace: 'ns', name });

describe('ObjectCache (watch-based configMap/secret manager)', () => {
  let api: FakeApiClient;
  let cache: ObjectCache;
  let stop: AbortController;
  beforeEach(() => {
    api = new FakeApiClient();
    stop = new AbortController();
    cache = new ObjectCache({ client: api, clock: realClock, logger: silentLogger(), signal: stop.signal });
  });
  afterEach(() => stop.abort());

  it('lists and watches one object by name; a get reads the store, following updates', async () => {
    api.put(CM, { metadata: { name: 'app' }, data: { k: 'v1' } });
    api.put(CM, { metadata: { name: 'other' }, data: { k: 'x' } });
    cache.register(ref('app'));
    expect((await cache.get(ref('app'))).data).toEqual({ k: 'v1' });
    await pollUntil('the watch', () => api.openWatches() === 1);
    api.put(CM, { metadata: { name: 'app' }, data: { k: 'v2' } });
    expect((await cache.get(ref('app'))).data).toEqual({ k: 'v2' });
    expect(api.lists).toBe(1);
  });

  it('a missing object is a 404 with the upstream message, until it is created', async () => {
    cache.register(ref('late'));
    const err = await cache.get(ref('late')).catch((e: Error) => e);
    expect(isNotFound(err)).toBe(true);
    expect((err as Error).message).toBe('configmap "late" not found');
    await pollUntil('the watch', () => api.openWatches() === 1);
    api.put(CM, { metadata: { name: 'late' }, data: { a: 'b' } });
    expect((await cache.get(ref('late'))).data).toEqual({ a: 'b' });
  });

  it('reference counting: the watch stops with the last unregister; unregistered gets fail', async () => {
    cache.register(ref('app'));
    cache.register(ref('app'));
    await pollUntil('the watch', () => api.openWatches() === 1);
    cache.unregister(ref('app'));
    expect(api.openWatches()).toBe(1);
    cache.unregister(ref('app'));
    await pollUntil('the watch to stop', () => api.openWatches() === 0);
    await expect(cache.get(ref('app'))).rejects.toThrow('object "ns"/"app" not registered');
  });

  it('tells listeners of every change after the first listing: update, delete, re-create', async () => {
    const heard: string[] = [];
    cache.onChange((r) => heard.push(`${r.kind}/${r.name}`));
    api.put(CM, { metadata: { name: 'app' }, data: { k: 'v1' } });
    cache.register(ref('app'));
    await cache.get(ref('app'));
    await pollUntil('the watch', () => api.openWatches() === 1);
    expect(heard).toEqual([]);
    api.put(CM, { metadata: { name: 'app' }, data: { k: 'v2' } });
    api.remove(CM, 'app');
    api.put(CM, { metadata: { name: 'app' }, data: { k: 'v3' } });
    expect(heard).toEqual(['configmap/app', 'configmap/app', 'configmap/app']);
  });

  it('the agent’s stop signal ends every watch', async () => {
    cache.register(ref('a'));
    cache.register(ref('b'));
    await pollUntil('two watches', () => api.openWatches() === 2);
    stop.abort();
    await pollUntil('no watch', () => api.openWatches() === 0);
  });

  it('a failing LIST is reported after 1 s with its cause', async () => {
    api.listFailure = 403;
    cache.register(ref('app'));
    await expect(cache.get(ref('app'))).rejects.toThrow(/^failed to sync configmap cache: GET .*: 403/);
  });

  it('an immutable object stops being watched and is still served', async () => {
    api.put(CM, { metadata: { name: 'frozen' }, data: { k: 'v' }, immutable: true });
    cache.register(ref('frozen'));
    expect((await cache.get(ref('frozen'))).data).toEqual({ k: 'v' });
    await pollUntil('the watch to stop', () => api.openWatches() === 0);
    expect(cache.watched()).toEqual([]);
    expect((await cache.get(ref('frozen'))).data).toEqual({ k: 'v' });
  });
});
