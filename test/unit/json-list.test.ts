import { describe, expect, it } from 'vitest';
import { jsonListChunks } from '../../src/main/server/json-list.js';

const jsonListBytes = (v: unknown, cache?: WeakMap<object, Buffer>) => Buffer.concat(jsonListChunks(v, cache));
const same = (v: unknown) => expect(jsonListBytes(v).toString()).toBe(JSON.stringify(v) ?? '');

describe('jsonListChunks', () => {
  it('gives the bytes of JSON.stringify for a list whose last key is items', () => {
    const pod = (i: number) => ({
      metadata: { name: `p-${i}`, annotations: { 'a/b': 'é\u2028"x"\n' } },
      spec: { containers: [{ name: 'c', command: ['sleep', '3600'] }] },
      status: { phase: 'Running', startTime: null, skipped: undefined },
    });
    same({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [pod(0), pod(1), pod(2)] });
    same({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [] });
    same({ kind: 'List', items: [1, 'x', null, undefined, () => 0, [undefined], new Date(0)] });
    expect(jsonListBytes({ items: [{ n: 1 }] }).toString()).toBe('{"items":[{"n":1}]}');
  });

  it('reuses the JSON of items it has seen, by identity', () => {
    const cache = new WeakMap<object, Buffer>();
    const a = { n: 1 };
    const b = { n: 2 };
    expect(jsonListBytes({ items: [a, b, 3] }, cache).toString()).toBe('{"items":[{"n":1},{"n":2},3]}');
    a.n = 10; // items must not change in place: the cached JSON stays
    expect(jsonListBytes({ kind: 'L', items: [b, a, { n: 3 }] }, cache).toString()).toBe('{"kind":"L","items":[{"n":2},{"n":1},{"n":3}]}');
    expect(jsonListBytes({ items: [{ n: 10 }] }, cache).toString()).toBe('{"items":[{"n":10}]}');
  });

  it('stringifies anything else whole', () => {
    same({ items: [1], kind: 'List' }); // items not last
    same({ items: 'x' });
    same([1, 2]);
    same({ items: [1], toJSON: () => ({ other: true }) });
    same('text');
    same(null);
    expect(jsonListBytes(undefined).length).toBe(0);
  });
});
