import { describe, expect, it } from 'vitest';
import { ApiStatusError, ApiUnreachableError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import type { RestClient } from '../../src/main/apiserver/rest-client.js';
import { nodeReference, Recorder } from '../../src/main/events/event-recorder.js';
import { ApiEventSink, type ApiEventSinkOptions } from '../../src/main/events/event-sink.js';
import { FakeClock } from '../fakes/fake-clock.js';

const settle = () => new Promise<void>((r) => setImmediate(r));

type Api = Pick<RestClient, 'get' | 'create' | 'replace' | 'patch'>;
type Call = { verb: 'create' | 'patch'; path: string; body: Record<string, unknown>; patchType?: string; at: number };

/** A no-op RestClient: every call fails loudly unless a test overrides it. */
const noopApi: Api = {
  get: () => Promise.reject(new Error('unexpected get')),
  create: () => Promise.reject(new Error('unexpected create')),
  replace: () => Promise.reject(new Error('unexpected replace')),
  patch: () => Promise.reject(new Error('unexpected patch')),
};

/** Records create/patch calls; `fail` holds errors for the next calls, `hang` makes calls never settle. */
function fakeApi(clock: FakeClock) {
  const calls: Call[] = [];
  const fail: { create: Error[]; patch: Error[] } = { create: [], patch: [] };
  const ctl = { hang: false };
  const answer = <T>(verb: 'create' | 'patch', body: unknown): Promise<T> => {
    if (ctl.hang) return new Promise<T>(() => undefined);
    const err = fail[verb].shift();
    return err ? Promise.reject(err) : Promise.resolve(structuredClone(body) as T);
  };
  const api: Api = {
    ...noopApi,
    create: <T>(path: string, body: unknown) => {
      calls.push({ verb: 'create', path, body: structuredClone(body) as Record<string, unknown>, at: clock.now() });
      return answer<T>('create', body);
    },
    patch: <T>(path: string, body: unknown, patchType: string) => {
      calls.push({ verb: 'patch', path, body: structuredClone(body) as Record<string, unknown>, patchType, at: clock.now() });
      return answer<T>('patch', body);
    },
  };
  return { api, calls, fail, ctl };
}

function setup(over: Partial<ApiEventSinkOptions> = {}) {
  const clock = new FakeClock();
  const { api, calls, fail, ctl } = fakeApi(clock);
  const ac = new AbortController();
  const sink = new ApiEventSink({
    client: api as unknown as RestClient,
    clock,
    logger: silentLogger(),
    signal: ac.signal,
    random: () => 0.5,
    ...over,
  });
  const recorder = new Recorder({ component: 'kubelet', host: 'node1', logger: silentLogger(), now: () => clock.now(), sink });
  return { clock, sink, recorder, calls, fail, ctl, ac, api };
}

const POD_REF = { kind: 'Pod', apiVersion: 'v1', namespace: 'ns1', name: 'web-0', uid: 'pod-uid' };

/** Steps the fake clock in 250 ms increments, letting the sink run in between. */
async function run(clock: FakeClock, ms: number) {
  for (let t = 0; t < ms; t += 250) {
    await settle();
    clock.step(250);
  }
  await settle();
}

describe('ApiEventSink (client-go recordToSink)', () => {
  it.each([
    { name: 'a node event goes to "default"', ref: nodeReference('node1'), ns: 'default', object: 'node1' },
    { name: 'a pod event goes to its namespace', ref: POD_REF, ns: 'ns1', object: 'web-0' },
  ])('$name, named <object>.<hex nanoseconds>', async ({ ref, ns, object }) => {
    const { clock, sink, recorder, calls } = setup();
    recorder.record(ref, 'Normal', 'Starting', 'Starting kubelet.');
    await sink.idle();
    expect(calls).toHaveLength(1);
    const { verb, path, body } = calls[0];
    expect([verb, path]).toEqual(['create', `/api/v1/namespaces/${ns}/events`]);
    expect(body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: ns },
      involvedObject: ref,
      reason: 'Starting',
      message: 'Starting kubelet.',
      type: 'Normal',
      source: { component: 'kubelet', host: 'node1' },
      count: 1,
    });
    const name = (body.metadata as { name: string }).name;
    const m = new RegExp(`^${object}\\.([0-9a-f]+)$`).exec(name);
    expect(m).not.toBeNull();
    const nanos = BigInt(`0x${m![1]}`);
    expect(nanos / 1_000_000n).toBe(BigInt(clock.now()));
    expect(sink.written).toBe(1);
  });

  it('a repeat is a strategic patch of count, lastTimestamp and message on the same event', async () => {
    const { clock, sink, recorder, calls } = setup();
    recorder.record(nodeReference('node1'), 'Normal', 'NodeReady', 'Node node1 status is now: NodeReady');
    await sink.idle();
    clock.step(30_000);
    recorder.record(nodeReference('node1'), 'Normal', 'NodeReady', 'Node node1 status is now: NodeReady');
    await sink.idle();
    const name = (calls[0].body.metadata as { name: string }).name;
    expect(calls[1]).toMatchObject({ verb: 'patch', path: `/api/v1/namespaces/default/events/${name}`, patchType: 'strategic' });
    expect(calls[1].body).toEqual({
      count: 2,
      lastTimestamp: new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
      message: 'Node node1 status is now: NodeReady',
    });
  });

  it('a patch that finds no event (404) creates it, under the same name', async () => {
    const { sink, recorder, calls, fail } = setup();
    recorder.record(nodeReference('node1'), 'Normal', 'NodeReady', 'ready');
    await sink.idle();
    fail.patch.push(new ApiStatusError('events "x" not found', 404, 'NotFound'));
    recorder.record(nodeReference('node1'), 'Normal', 'NodeReady', 'ready');
    await sink.idle();
    expect(calls.map((c) => c.verb)).toEqual(['create', 'patch', 'create']);
    expect((calls[2].body.metadata as { name: string }).name).toBe((calls[0].body.metadata as { name: string }).name);
    expect(calls[2].body.count).toBe(2);
    expect(sink.written).toBe(2);
  });

  it('a network failure is retried: first wait randomised, then every 10 s', async () => {
    const { clock, sink, recorder, calls, fail } = setup({ random: () => 0.25 });
    const start = clock.now();
    fail.create.push(...Array.from({ length: 3 }, () => new ApiUnreachableError('connect ECONNREFUSED')));
    recorder.record(nodeReference('node1'), 'Normal', 'Starting', 'Starting kubelet.');
    await run(clock, 60_000);
    expect(calls.map((c) => c.at - start)).toEqual([0, 2500, 12_500, 22_500]);
    expect([sink.written, sink.dropped]).toEqual([1, 0]);
  });

  it('gives up after 12 tries and counts the event as dropped; the next event is still written', async () => {
    const { clock, sink, recorder, calls, fail } = setup();
    fail.create.push(...Array.from({ length: 12 }, () => new ApiUnreachableError('connect ECONNREFUSED')));
    recorder.record(nodeReference('node1'), 'Normal', 'Starting', 'Starting kubelet.');
    recorder.record(nodeReference('node1'), 'Normal', 'NodeReady', 'ready');
    await run(clock, 200_000);
    expect(calls.filter((c) => c.body.reason === 'Starting')).toHaveLength(12);
    expect(calls.filter((c) => c.body.reason === 'NodeReady')).toHaveLength(1);
    expect([sink.written, sink.dropped]).toEqual([1, 1]);
  });

  // recordEvent: any *errors.StatusError from the apiserver is not retried.
  it.each([
    [400, 'BadRequest'],
    [403, 'Forbidden'],
    [409, 'AlreadyExists'],
    [422, 'Invalid'],
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
  ])('an apiserver answer %d %s drops the event without retrying', async (status, reason) => {
    const { clock, sink, recorder, calls, fail } = setup();
    fail.create.push(new ApiStatusError(`rejected: ${reason}`, status, reason));
    recorder.record(nodeReference('node1'), 'Warning', 'Rebooted', 'Node node1 has been rebooted');
    await run(clock, 30_000);
    expect(calls).toHaveLength(1);
    expect(sink.dropped).toBe(1);
  });

  it('a full queue drops newer events and counts them; add() never blocks or throws', async () => {
    const { sink, recorder, calls, ctl } = setup({ maxQueued: 3 });
    ctl.hang = true; // the first write never finishes
    for (let i = 0; i < 10; i++) {
      expect(() => recorder.record(nodeReference('node1'), 'Normal', 'R', `m${i}`)).not.toThrow();
    }
    await settle();
    expect(calls).toHaveLength(1);
    expect(sink.dropped).toBe(6);
  });

  it('a client that throws synchronously does not reach the caller', async () => {
    const { clock, sink, recorder, api } = setup({ maxTries: 2 });
    api.create = () => {
      throw new TypeError('boom');
    };
    expect(() => recorder.record(nodeReference('node1'), 'Normal', 'Starting', 'x')).not.toThrow();
    await run(clock, 30_000);
    expect(sink.dropped).toBe(1);
  });

  it('after the signal aborts, add() is a no-op', async () => {
    const { sink, recorder, calls, ac } = setup();
    ac.abort();
    recorder.record(nodeReference('node1'), 'Normal', 'Starting', 'x');
    await sink.idle();
    expect(calls).toHaveLength(0);
  });
});
