import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { ApiStatusError, ApiUnreachableError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import type { RestClient, WatchEvent } from '../../src/main/apiserver/rest-client.js';
import { ApiSource } from '../../src/main/podconfig/api-source.js';
import { PodStorage } from '../../src/main/podconfig/pod-storage.js';
import type { PodUpdate } from '../../src/main/podconfig/types.js';
import { FakeClock } from '../fakes/fake-clock.js';

const settle = async (rounds = 5) => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
};

const pod = (uid: string, rv: string, phase = 'Pending'): Pod =>
  ({ metadata: { name: `p-${uid}`, namespace: 'default', uid, resourceVersion: rv }, spec: {}, status: { phase } }) as Pod;
const ev = (type: WatchEvent['type'], object: unknown): WatchEvent => ({ type, object: object as Record<string, unknown> });
const bookmark = (rv: string) => ev('BOOKMARK', { metadata: { resourceVersion: rv } });
const errorEvent = (code: number, reason: string) => ev('ERROR', { kind: 'Status', code, reason, message: `${reason}!` });

type Query = Record<string, string | number | boolean | undefined>;

/** One open watch the test drives: deliver chunks of events, then end or break the stream. */
class Stream {
  private resolve!: () => void;
  private reject!: (err: unknown) => void;
  readonly done: Promise<void>;
  closed = false;
  private readonly detach: () => void;

  constructor(
    readonly query: Query,
    private readonly onEvent: (e: WatchEvent) => void,
    private readonly onChunkEnd: (() => void) | undefined,
    signal: AbortSignal | undefined,
  ) {
    this.done = new Promise<void>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
    const onAbort = () => this.fail(new ApiUnreachableError('WATCH /api/v1/pods: aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    this.detach = () => signal?.removeEventListener('abort', onAbort);
  }

  /** As RestClient.watch: events of one network chunk, then onChunkEnd; a throwing consumer ends the watch with its error. */
  chunk(...events: WatchEvent[]): void {
    for (const e of events) {
      try {
        this.onEvent(e);
      } catch (err) {
        this.fail(err);
        return;
      }
    }
    this.onChunkEnd?.();
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    this.resolve();
  }

  fail(err: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    this.reject(err);
  }
}

/** A RestClient with only `get` (the LIST) and `watch`; lists are queued answers (a pod list or an error). */
function fakeApi() {
  const lists: (Pod[] | { rv: string; items: Pod[] } | Error)[] = [];
  const listCalls: { path: string; query: Query | undefined }[] = [];
  const streams: Stream[] = [];
  const client = {
    get: async <T>(path: string, opts: { query?: Query; signal?: AbortSignal } = {}) => {
      listCalls.push({ path, query: opts.query });
      if (opts.signal?.aborted) throw new ApiUnreachableError('aborted');
      const next = lists.shift() ?? new ApiUnreachableError('no list queued');
      if (next instanceof Error) throw next;
      const { rv, items } = Array.isArray(next) ? { rv: '100', items: next } : next;
      return structuredClone({ kind: 'PodList', metadata: { resourceVersion: rv }, items }) as T;
    },
    watch: (path: string, query: Query, onEvent: (e: WatchEvent) => void, opts: { signal?: AbortSignal; onChunkEnd?: () => void } = {}) => {
      expect(path).toBe('/api/v1/pods');
      const s = new Stream(query, onEvent, opts.onChunkEnd, opts.signal);
      streams.push(s);
      return s.done;
    },
  };
  return { client: client as unknown as RestClient, lists, listCalls, streams };
}

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

function setup(o: { random?: number; ready?: Promise<void> } = {}) {
  const clock = new FakeClock();
  const api = fakeApi();
  const sets: string[][] = [];
  const updates: Omit<PodUpdate, 'source'>[] = [];
  const source = new ApiSource({
    client: api.client,
    nodeName: 'node1',
    clock,
    logger: silentLogger(),
    ready: () => o.ready ?? Promise.resolve(),
    random: () => o.random ?? 0.5,
  });
  const ac = new AbortController();
  controllers.push(ac);
  source.start(ac.signal, (u) => {
    updates.push(u);
    if (u.op === 'SET') sets.push(u.pods.map((p) => `${p.metadata.uid}@${p.metadata.resourceVersion}`).sort());
  });
  const stream = (i: number) => {
    const s = api.streams[i];
    if (!s) throw new Error(`no watch #${i} (have ${api.streams.length})`);
    return s;
  };
  return { clock, api, sets, updates, source, ac, stream };
}

describe('ApiSource', () => {
  it('waits for ready(), then LISTs its node’s pods and sends one SET', async () => {
    let open!: () => void;
    const t = setup({ ready: new Promise<void>((r) => (open = r)) });
    t.api.lists.push([pod('a', '5'), pod('b', '6')]);
    await settle();
    expect(t.api.listCalls).toHaveLength(0);
    expect(t.updates).toHaveLength(0);
    open();
    await settle();
    expect(t.api.listCalls).toEqual([{ path: '/api/v1/pods', query: { fieldSelector: 'spec.nodeName=node1' } }]);
    expect(t.updates.map((u) => u.op)).toEqual(['SET']);
    expect(t.sets).toEqual([['a@5', 'b@6']]);
  });

  it('an empty list still sends a SET (the source is then seen)', async () => {
    const t = setup();
    t.api.lists.push([]);
    await settle();
    expect(t.sets).toEqual([[]]);
  });

  it.each([
    { random: 0, timeoutSeconds: 300 },
    { random: 0.5, timeoutSeconds: 450 },
    { random: 0.9999, timeoutSeconds: 599 },
  ])(
    'watches from the list’s resourceVersion with bookmarks (random $random → timeoutSeconds $timeoutSeconds)',
    async ({ random, timeoutSeconds }) => {
      const t = setup({ random });
      t.api.lists.push({ rv: '42', items: [] });
      await settle();
      expect(t.stream(0).query).toEqual({
        fieldSelector: 'spec.nodeName=node1',
        resourceVersion: '42',
        allowWatchBookmarks: true,
        timeoutSeconds,
      });
    },
  );

  it('folds ADDED, MODIFIED and DELETED into the store and sends one SET per chunk', async () => {
    const t = setup();
    t.api.lists.push([pod('a', '5'), pod('b', '6')]);
    await settle();
    t.stream(0).chunk(ev('ADDED', pod('c', '7')), ev('MODIFIED', pod('a', '8', 'Running')), ev('DELETED', pod('b', '9')));
    expect(t.sets).toEqual([
      ['a@5', 'b@6'],
      ['a@8', 'c@7'],
    ]);
    t.stream(0).chunk(ev('MODIFIED', pod('c', '10')));
    expect(t.sets.at(-1)).toEqual(['a@8', 'c@10']);
    expect(t.sets).toHaveLength(3);
  });

  it('a stream that ends is watched again from the last resourceVersion, without a relist', async () => {
    const t = setup();
    t.api.lists.push({ rv: '5', items: [] });
    await settle();
    t.stream(0).chunk(ev('ADDED', pod('a', '11')));
    t.stream(0).end();
    await settle();
    expect(t.stream(1).query.resourceVersion).toBe('11');
    expect(t.api.listCalls).toHaveLength(1);
    expect(t.clock.pendingTimers()).toBe(0);
  });

  it('a BOOKMARK only moves the resourceVersion', async () => {
    const t = setup();
    t.api.lists.push([pod('a', '5')]);
    await settle();
    t.stream(0).chunk(bookmark('77'));
    expect(t.sets).toHaveLength(1);
    t.stream(0).end();
    await settle();
    expect(t.stream(1).query.resourceVersion).toBe('77');
  });

  it.each([
    { name: 'a watch ERROR event 410 Expired', brk: (s: Stream) => s.chunk(errorEvent(410, 'Expired')) },
    { name: 'a watch ERROR event 410 Gone', brk: (s: Stream) => s.chunk(errorEvent(410, 'Gone')) },
    { name: 'a 410 answer to the watch', brk: (s: Stream) => s.fail(new ApiStatusError('WATCH: 410 Gone', 410, 'Gone')) },
  ])('$name relists at once and watches from the new list', async ({ brk }) => {
    const t = setup();
    t.api.lists.push({ rv: '5', items: [pod('a', '5'), pod('b', '5')] }, { rv: '900', items: [pod('b', '880')] });
    await settle();
    brk(t.stream(0));
    await settle();
    expect(t.api.listCalls).toHaveLength(2);
    expect(t.sets).toEqual([['a@5', 'b@5'], ['b@880']]);
    expect(t.stream(1).query.resourceVersion).toBe('900');
    expect(t.clock.pendingTimers()).toBe(0);
  });

  it('other failures back off 0.8 s doubling to 30 s, then resume the watch from the kept resourceVersion', async () => {
    const t = setup();
    t.api.lists.push({ rv: '5', items: [pod('a', '5')] });
    await settle();
    t.stream(0).chunk(ev('MODIFIED', pod('a', '12')));
    const waits = [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000];
    for (const [i, ms] of waits.entries()) {
      t.stream(i).fail(i % 2 ? new ApiStatusError('WATCH: 500', 500, 'InternalError') : new ApiUnreachableError('ECONNREFUSED'));
      await settle();
      t.clock.step(ms - 1);
      await settle();
      expect(t.api.streams, `retry ${i} not before ${ms} ms`).toHaveLength(i + 1);
      t.clock.step(1);
      await settle();
      expect(t.api.streams, `retry ${i} after ${ms} ms`).toHaveLength(i + 2);
      expect(t.stream(i + 1).query.resourceVersion).toBe('12');
    }
    expect(t.api.listCalls).toHaveLength(1);
    // The outage sent nothing: the last SET stays in force.
    expect(t.sets).toEqual([['a@5'], ['a@12']]);
  });

  it('a watch ERROR event other than 410 backs off like a broken stream', async () => {
    const t = setup();
    t.api.lists.push({ rv: '5', items: [] });
    await settle();
    t.stream(0).chunk(errorEvent(500, 'InternalError'));
    await settle();
    t.clock.step(800);
    await settle();
    expect(t.stream(1).query.resourceVersion).toBe('5');
    expect(t.api.listCalls).toHaveLength(1);
  });

  it('events before an ERROR in the same chunk still reach PodConfig', async () => {
    const t = setup();
    t.api.lists.push({ rv: '5', items: [] });
    await settle();
    t.stream(0).chunk(ev('ADDED', pod('a', '6')), errorEvent(500, 'InternalError'));
    await settle();
    t.clock.step(800);
    await settle();
    t.stream(1).end();
    await settle();
    // Upstream's UndeltaStore pushes a SET for every event as it arrives.
    expect(t.sets.at(-1)).toEqual(['a@6']);
  });

  it('a failed LIST backs off and lists again', async () => {
    const t = setup();
    t.api.lists.push(new ApiUnreachableError('ECONNREFUSED'), new ApiStatusError('500', 500, 'InternalError'), [pod('a', '5')]);
    await settle();
    expect(t.api.listCalls).toHaveLength(1);
    t.clock.step(800);
    await settle();
    expect(t.api.listCalls).toHaveLength(2);
    t.clock.step(1599);
    await settle();
    expect(t.api.listCalls).toHaveLength(2);
    t.clock.step(1);
    await settle();
    expect(t.api.listCalls).toHaveLength(3);
    expect(t.sets).toEqual([['a@5']]);
    expect(t.api.streams).toHaveLength(1);
  });

  // Regression (fault suite, apiserver outages): after one outage had taken the backoff to 30 s, the next
  // one, minutes later on a watch that had been working since, also waited 30 s before its first retry.
  // client-go's backoff manager starts again at 0.8 s when the previous backoff began over 2 min ago.
  it('a failure over 2 min after the previous backoff began retries after 0.8 s again', async () => {
    const t = setup();
    t.api.lists.push({ rv: '5', items: [] });
    await settle();
    for (const ms of [800, 1600, 3200, 6400, 12_800, 25_600, 30_000]) {
      t.stream(t.api.streams.length - 1).fail(new ApiUnreachableError('ECONNREFUSED'));
      await settle();
      t.clock.step(ms);
      await settle();
    }
    expect(t.api.streams).toHaveLength(8);
    // Within 2 min of the last backoff: still 30 s.
    t.clock.step(60_000);
    t.stream(7).fail(new ApiUnreachableError('ECONNREFUSED'));
    await settle();
    t.clock.step(29_999);
    await settle();
    expect(t.api.streams).toHaveLength(8);
    t.clock.step(1);
    await settle();
    expect(t.api.streams).toHaveLength(9);
    // The watch then works for over 2 min: the next failure starts again at 0.8 s.
    t.clock.step(120_001);
    t.stream(8).fail(new ApiUnreachableError('ECONNREFUSED'));
    await settle();
    t.clock.step(800);
    await settle();
    expect(t.api.streams).toHaveLength(10);
    expect(t.api.listCalls).toHaveLength(1);
  });

  it('the backoff starts again at 0.8 s after a watch ends cleanly', async () => {
    const t = setup();
    t.api.lists.push({ rv: '5', items: [] });
    await settle();
    for (const ms of [800, 1600]) {
      t.stream(t.api.streams.length - 1).fail(new ApiUnreachableError('reset'));
      await settle();
      t.clock.step(ms);
      await settle();
    }
    t.stream(2).end();
    await settle();
    t.stream(3).fail(new ApiUnreachableError('reset'));
    await settle();
    t.clock.step(800);
    await settle();
    expect(t.api.streams).toHaveLength(5);
  });

  it('sends copies: a consumer changing a pod does not change the store', async () => {
    const t = setup();
    t.api.lists.push([pod('a', '5')]);
    await settle();
    (t.updates[0].pods[0].spec as { nodeName?: string }).nodeName = 'mutated';
    t.stream(0).chunk(ev('MODIFIED', pod('a', '6')));
    const sent = t.updates.at(-1)!.pods[0];
    expect(sent.metadata.resourceVersion).toBe('6');
    expect(sent.spec).toEqual({});
  });

  it('copies only the pods that changed: the others are the copies sent before', async () => {
    const t = setup();
    t.api.lists.push([pod('a', '5'), pod('b', '6'), pod('c', '7')]);
    await settle();
    const byUid = (i: number) => new Map(t.updates[i].pods.map((p) => [p.metadata.uid, p]));
    t.stream(0).chunk(ev('MODIFIED', pod('b', '8', 'Running')));
    t.stream(0).chunk(ev('DELETED', pod('c', '9')), ev('ADDED', pod('d', '10')));
    const [first, second, third] = [byUid(0), byUid(1), byUid(2)];
    expect(second.get('a')).toBe(first.get('a'));
    expect(second.get('c')).toBe(first.get('c'));
    expect(second.get('b')).not.toBe(first.get('b'));
    expect(second.get('b')!.status?.phase).toBe('Running');
    expect(third.get('a')).toBe(first.get('a'));
    expect(third.get('b')).toBe(second.get('b'));
    expect([...third.keys()].sort()).toEqual(['a', 'b', 'd']);
  });

  it('through PodStorage, a SET of reused copies gives the deltas of fresh ones', async () => {
    const t = setup();
    const reused = new PodStorage({ clock: t.clock, logger: silentLogger() });
    const fresh = new PodStorage({ clock: t.clock, logger: silentLogger() });
    const ops: { reused: string[]; fresh: string[] }[] = [];
    const merge = (u: Omit<PodUpdate, 'source'>) => {
      const show = (us: PodUpdate[]) => us.map((d) => `${d.op}:${d.pods.map((p) => p.metadata.uid).join(',')}`);
      ops.push({
        reused: show(reused.merge('api', { op: u.op, pods: u.pods })),
        fresh: show(fresh.merge('api', { op: u.op, pods: structuredClone(u.pods) })),
      });
    };
    t.api.lists.push([pod('a', '5'), pod('b', '6')]);
    await settle();
    merge(t.updates[0]);
    const withSpec = (uid: string, rv: string, nodeName: string) => ({ ...pod(uid, rv), spec: { nodeName } }) as Pod;
    const chunks = [
      [ev('MODIFIED', pod('a', '7', 'Running'))],
      [ev('ADDED', pod('c', '8'))],
      [ev('MODIFIED', withSpec('b', '9', 'n2'))],
      [ev('MODIFIED', { ...pod('a', '10', 'Running'), metadata: { ...pod('a', '10').metadata, deletionTimestamp: 'now' } })],
      [ev('DELETED', pod('c', '11'))],
      [ev('MODIFIED', { ...withSpec('b', '12', 'n2'), status: { phase: 'Failed' } })],
    ];
    for (const [i, c] of chunks.entries()) {
      t.stream(0).chunk(...c);
      merge(t.updates[i + 1]);
    }
    for (const o of ops) expect(o.reused).toEqual(o.fresh);
    expect(ops.map((o) => o.reused)).toEqual([
      ['ADD:a,b'],
      ['RECONCILE:a'],
      ['ADD:c'],
      ['UPDATE:b'],
      ['DELETE:a'],
      ['REMOVE:c'],
      ['RECONCILE:b'],
    ]);
  });

  it.each([
    { name: 'while watching', prepare: async (_t: ReturnType<typeof setup>) => undefined },
    {
      name: 'while backing off',
      prepare: async (t: ReturnType<typeof setup>) => {
        t.stream(0).fail(new ApiUnreachableError('reset'));
        await settle();
        expect(t.clock.pendingTimers()).toBe(1);
      },
    },
  ])('abort stops it $name: no more requests, no more updates', async ({ prepare }) => {
    const t = setup();
    t.api.lists.push([pod('a', '5')]);
    await settle();
    await prepare(t);
    const streams = t.api.streams.length;
    t.ac.abort();
    await settle();
    t.clock.step(60_000);
    await settle();
    expect(t.api.streams).toHaveLength(streams);
    expect(t.api.listCalls).toHaveLength(1);
    expect(t.updates).toHaveLength(1);
    expect(t.clock.pendingTimers()).toBe(0);
  });

  it('an abort before ready() resolves never lists', async () => {
    let open!: () => void;
    const t = setup({ ready: new Promise<void>((r) => (open = r)) });
    t.ac.abort();
    open();
    await settle();
    expect(t.api.listCalls).toHaveLength(0);
    expect(t.updates).toHaveLength(0);
  });
});
