import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { IMAGE_CACHE_REFRESH_MS, ImageListCache } from '../../src/main/images/image-list-cache.js';
import { FakeClock } from '../fakes/fake-clock.js';

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const image = (id: string, size: number, tag = `${id}:1`) => ({
  id,
  repoTags: [tag],
  repoDigests: [],
  size: BigInt(size),
  username: '',
  pinned: false,
});

function setup() {
  const clock = new FakeClock();
  let images = [image('a', 10), image('b', 30), image('c', 10)];
  let fail: Error | undefined;
  let calls = 0;
  const cri = {
    listImages: async () => {
      calls++;
      if (fail) throw fail;
      return { images };
    },
  };
  const cache = new ImageListCache(cri, clock, silentLogger());
  return {
    clock,
    cache,
    calls: () => calls,
    set: (next: ReturnType<typeof image>[]) => (images = next),
    failWith: (err: Error | undefined) => (fail = err),
  };
}

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

// Upstream image_gc_manager.go: the node status reads imageCache, which a goroutine refreshes every 30 s.
describe('ImageListCache (the image manager’s image list)', () => {
  it('lists once for any number of reads between refreshes, largest first, equal sizes by id descending', async () => {
    const t = setup();
    const ac = new AbortController();
    controllers.push(ac);
    t.cache.start(ac.signal);
    await flush();
    for (let i = 0; i < 5; i++) expect((await t.cache.list()).map((x) => x.repoTags[0])).toEqual(['b:1', 'c:1', 'a:1']);
    expect(t.calls()).toBe(1);
    t.set([image('d', 99)]);
    t.clock.step(IMAGE_CACHE_REFRESH_MS - 1);
    await flush();
    expect((await t.cache.list()).map((x) => x.repoTags[0])).toEqual(['b:1', 'c:1', 'a:1']);
    t.clock.step(1);
    await flush();
    expect((await t.cache.list()).map((x) => x.repoTags[0])).toEqual(['d:1']);
    expect(t.calls()).toBe(2);
  });

  it('a reader before the first refresh waits for one; a failed refresh keeps the last list', async () => {
    const t = setup();
    expect(await t.cache.list()).toHaveLength(3);
    t.failWith(new Error('runtime down'));
    await t.cache.refresh();
    expect(await t.cache.list()).toHaveLength(3);
  });

  it('a list that never succeeded is empty', async () => {
    const t = setup();
    t.failWith(new Error('runtime down'));
    expect(await t.cache.list()).toEqual([]);
  });
});
