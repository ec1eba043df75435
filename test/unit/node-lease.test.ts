import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/api/cluster.js';
import { ApiStatusError, ApiUnreachableError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import type { RestClient } from '../../src/main/apiserver/rest-client.js';
import { microTime } from '../../src/common/time.js';
import { NodeLeaseController } from '../../src/main/node/node-lease.js';
import { FakeClock } from '../fakes/fake-clock.js';

const settle = () => new Promise<void>((r) => setImmediate(r));

const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
const NODE_PATH = '/api/v1/nodes/node1';

const notFound = () => new ApiStatusError('not found', 404, 'NotFound');
const conflict = () => new ApiStatusError('the object has been modified', 409, 'Conflict');
const internal = () => new ApiStatusError('etcdserver: request timed out', 500, 'InternalError');

type Api = Pick<RestClient, 'get' | 'create' | 'replace' | 'patch'>;
type Call = { verb: 'get' | 'create' | 'replace'; path: string; at: number; body?: Lease };

/** A no-op RestClient: every call fails loudly unless a test overrides it. */
const noopApi: Api = {
  get: () => Promise.reject(new Error('unexpected get')),
  create: () => Promise.reject(new Error('unexpected create')),
  replace: () => Promise.reject(new Error('unexpected replace')),
  patch: () => Promise.reject(new Error('unexpected patch')),
};

/**
 * A partial fake over noopApi: a tiny store of the Node and the Lease with
 * resourceVersions, plus `fail[verb]`, errors thrown by the next calls of that verb.
 */
function fakeApi(clock: FakeClock, o: { nodeUid?: string; lease?: Lease } = {}) {
  const calls: Call[] = [];
  const fail: Record<string, Error[]> = { get: [], getLease: [], create: [], replace: [] };
  let rv = 100;
  const state = { nodeUid: o.nodeUid, lease: o.lease && structuredClone(o.lease) };
  const api: Api = {
    ...noopApi,
    get: async <T>(path: string) => {
      calls.push({ verb: 'get', path, at: clock.now() });
      if (path === NODE_PATH) {
        if (!state.nodeUid) throw notFound();
        return { metadata: { name: 'node1', uid: state.nodeUid } } as T;
      }
      const err = fail.getLease.shift();
      if (err) throw err;
      if (!state.lease) throw notFound();
      return structuredClone(state.lease) as T;
    },
    create: async <T>(path: string, body: unknown) => {
      calls.push({ verb: 'create', path, at: clock.now(), body: structuredClone(body) as Lease });
      const err = fail.create.shift();
      if (err) throw err;
      state.lease = { ...(structuredClone(body) as Lease) };
      state.lease.metadata = { ...state.lease.metadata, resourceVersion: String(++rv) };
      return structuredClone(state.lease) as T;
    },
    replace: async <T>(path: string, body: unknown) => {
      calls.push({ verb: 'replace', path, at: clock.now(), body: structuredClone(body) as Lease });
      const err = fail.replace.shift();
      if (err) throw err;
      const lease = structuredClone(body) as Lease;
      if (lease.metadata?.resourceVersion !== state.lease?.metadata?.resourceVersion) throw conflict();
      lease.metadata = { ...lease.metadata, resourceVersion: String(++rv) };
      state.lease = lease;
      return structuredClone(lease) as T;
    },
  };
  return { api, calls, fail, state };
}

function controller(clock: FakeClock, api: Api, o: { duration?: number; onRepeatedFailure?: () => void; random?: () => number } = {}) {
  return new NodeLeaseController({
    client: api as unknown as RestClient,
    nodeName: 'node1',
    leaseDurationSeconds: o.duration ?? 40,
    clock,
    logger: silentLogger(),
    random: o.random ?? (() => 0),
    ...(o.onRepeatedFailure ? { onRepeatedFailure: o.onRepeatedFailure } : {}),
  });
}

const existingLease = (): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: {
    name: 'node1',
    namespace: 'kube-node-lease',
    resourceVersion: '7',
    ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node1', uid: 'node-uid' }],
  },
  spec: { holderIdentity: 'node1', leaseDurationSeconds: 40, renewTime: '2020-01-01T00:00:00.000000Z' },
});

const verbs = (calls: Call[]) => calls.map((c) => `${c.verb} ${c.path === NODE_PATH ? 'node' : 'lease'}`);

describe('microTime', () => {
  it.each([
    [Date.UTC(2026, 0, 2, 3, 4, 5, 678), '2026-01-02T03:04:05.678000Z'],
    [Date.UTC(2026, 11, 31, 23, 59, 59, 0), '2026-12-31T23:59:59.000000Z'],
  ])('%d → %s (RFC3339 with microseconds)', (ms, expected) => {
    expect(microTime(ms)).toBe(expected);
  });
});

describe('NodeLeaseController (upstream lease controller as the kubelet runs it)', () => {
  it('creates the lease when missing, owned by the Node, and does not update it in the same sync', async () => {
    const clock = new FakeClock();
    const { api, calls } = fakeApi(clock, { nodeUid: 'node-uid' });
    await controller(clock, api).sync();
    expect(verbs(calls)).toEqual(['get lease', 'get node', 'create lease']);
    expect(calls[2].path).toBe(LEASE_PATH);
    expect(calls[2].body).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'node1',
        namespace: 'kube-node-lease',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node1', uid: 'node-uid' }],
      },
      spec: { holderIdentity: 'node1', leaseDurationSeconds: 40, renewTime: microTime(clock.now()) },
    });
  });

  // Upstream ensureLease: when the owner reference cannot be set (Node not found),
  // the lease is not created this time; the next sync tries again.
  it('does not create an unowned lease before the Node exists', async () => {
    const clock = new FakeClock();
    const { api, calls, state } = fakeApi(clock);
    const c = controller(clock, api);
    await c.sync();
    expect(calls.filter((x) => x.verb === 'create')).toEqual([]);
    state.nodeUid = 'node-uid';
    clock.step(10_000);
    await c.sync();
    const created = calls.filter((x) => x.verb === 'create');
    expect(created).toHaveLength(1);
    expect(created[0].body!.metadata!.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'node1', uid: 'node-uid' }]);
  });

  it('renews from the lease it last wrote, without a GET', async () => {
    const clock = new FakeClock();
    const { api, calls } = fakeApi(clock, { nodeUid: 'node-uid' });
    const c = controller(clock, api);
    await c.sync();
    for (let i = 1; i <= 3; i++) {
      clock.step(10_000);
      calls.length = 0;
      await c.sync();
      expect(verbs(calls)).toEqual(['replace lease']);
      expect(calls[0].path).toBe(`${LEASE_PATH}/node1`);
      expect(calls[0].body!.spec!.renewTime).toBe(microTime(clock.now()));
      expect(calls[0].body!.metadata!.resourceVersion).toBe(String(100 + i));
    }
  });

  it('an existing lease is read and updated (not created) on the first sync', async () => {
    const clock = new FakeClock();
    const { api, calls } = fakeApi(clock, { nodeUid: 'node-uid', lease: existingLease() });
    await controller(clock, api).sync();
    expect(verbs(calls)).toEqual(['get lease', 'replace lease']);
    expect(calls[1].body!.metadata!.resourceVersion).toBe('7');
    expect(calls[1].body!.spec!.renewTime).toBe(microTime(clock.now()));
  });

  it('a 409 re-reads the lease and retries with the newer version', async () => {
    const clock = new FakeClock();
    const { api, calls, state } = fakeApi(clock, { nodeUid: 'node-uid', lease: existingLease() });
    const c = controller(clock, api);
    await c.sync();
    state.lease!.metadata!.resourceVersion = '500'; // someone else wrote it
    calls.length = 0;
    clock.step(10_000);
    await c.sync();
    expect(verbs(calls)).toEqual(['replace lease', 'get lease', 'replace lease']);
    expect(calls[2].body!.metadata!.resourceVersion).toBe('500');
    expect(state.lease!.metadata!.resourceVersion).not.toBe('500');
  });

  // retryUpdateLease: up to 5 updates; onRepeatedHeartbeatFailure after each
  // failed try but the first (i > 0), not on conflicts.
  it.each([
    { failures: 1, replaces: 2, gets: 0, repeated: 0 },
    { failures: 2, replaces: 3, gets: 0, repeated: 1 },
    { failures: 4, replaces: 5, gets: 0, repeated: 3 },
    // Five failed tries: fall back to ensure (GET), then up to five more tries.
    { failures: 5, replaces: 6, gets: 1, repeated: 4 },
    { failures: 10, replaces: 10, gets: 1, repeated: 8 },
  ])('$failures failed updates', async ({ failures, replaces, gets, repeated }) => {
    const clock = new FakeClock();
    const { api, calls, fail } = fakeApi(clock, { nodeUid: 'node-uid', lease: existingLease() });
    let onRepeated = 0;
    const c = controller(clock, api, { onRepeatedFailure: () => onRepeated++ });
    await c.sync();
    calls.length = 0;
    fail.replace = Array.from({ length: failures }, internal);
    clock.step(10_000);
    await c.sync();
    expect(calls.filter((x) => x.verb === 'replace')).toHaveLength(replaces);
    expect(calls.filter((x) => x.verb === 'get')).toHaveLength(gets);
    expect(onRepeated).toBe(repeated);
  });

  it('ensuring the lease backs off 200 ms, doubling, capped at 7 s', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const { api, calls, fail } = fakeApi(clock, { nodeUid: 'node-uid', lease: existingLease() });
    fail.getLease = Array.from({ length: 9 }, () => new ApiUnreachableError('connection refused'));
    let done = false;
    const syncing = controller(clock, api)
      .sync()
      .then(() => (done = true));
    for (let t = 0; t < 40_000 && !done; t += 50) {
      await settle();
      clock.step(50);
    }
    await settle();
    expect(done).toBe(true);
    await syncing;
    const gets = calls.filter((x) => x.verb === 'get' && x.path !== NODE_PATH).map((x) => x.at - start);
    const waits = gets.slice(1).map((t, i) => t - gets[i]);
    expect(waits).toEqual([200, 400, 800, 1600, 3200, 6400, 7000, 7000, 7000]);
  });

  it.each([
    [40, 10_000],
    [60, 15_000],
    [10, 2_500],
  ])('leaseDurationSeconds %d → renews every %d ms, measured from the end of a sync', async (duration, interval) => {
    const clock = new FakeClock();
    const start = clock.now();
    const { api, calls } = fakeApi(clock, { nodeUid: 'node-uid', lease: existingLease() });
    const c = controller(clock, api, { duration });
    expect(c.renewIntervalMs).toBe(interval);
    const ac = new AbortController();
    c.start(ac.signal);
    for (let t = 0; t < 3 * interval; t += 250) {
      await settle();
      clock.step(250);
    }
    await settle();
    ac.abort();
    const puts = calls.filter((x) => x.verb === 'replace').map((x) => x.at - start);
    expect(puts).toEqual([0, interval, 2 * interval, 3 * interval]);
  });

  it('each period is stretched by up to 4 % at random (upstream JitterUntil factor 0.04)', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const { api, calls } = fakeApi(clock, { nodeUid: 'node-uid', lease: existingLease() });
    const c = controller(clock, api, { random: () => 0.5 });
    const ac = new AbortController();
    c.start(ac.signal);
    for (let t = 0; t < 25_000; t += 100) {
      await settle();
      clock.step(100);
    }
    await settle();
    ac.abort();
    expect(calls.filter((x) => x.verb === 'replace').map((x) => x.at - start)).toEqual([0, 10_200, 20_400]);
  });

  it('a renewal changes only renewTime: a holder and duration someone else wrote are kept (upstream newLease)', async () => {
    const clock = new FakeClock();
    const lease = existingLease();
    lease.spec = { ...lease.spec, holderIdentity: 'someone-else', leaseDurationSeconds: 15 };
    lease.metadata!.labels = { 'example.com/team': 'infra' };
    const { api, calls } = fakeApi(clock, { nodeUid: 'node-uid', lease });
    await controller(clock, api).sync();
    const put = calls.find((x) => x.verb === 'replace')!.body!;
    expect(put.spec).toEqual({ holderIdentity: 'someone-else', leaseDurationSeconds: 15, renewTime: microTime(clock.now()) });
    expect(put.metadata!.labels).toEqual({ 'example.com/team': 'infra' });
  });
});
