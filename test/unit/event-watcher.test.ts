import { describe, expect, it } from 'vitest';
import {
  ContainerEventType,
  ContainerState,
  PodSandboxState,
  type ContainerEventResponse,
  type ContainerStatus,
} from '../../src/gen/runtime/v1/api.js';
import { ContainerEventWatcher, type ContainerEventBatch } from '../../src/container-events/event-watcher.js';
import { PodStatusCache } from '../../src/shared/pod-status-cache.js';

const MS = 1_000_000n;
const SB = 'sb'.repeat(32);

function container(id: string, state: ContainerState): ContainerStatus {
  return {
    id,
    metadata: { name: `c-${id}`, attempt: 0 },
    state,
    createdAt: 1n,
    startedAt: 2n,
    finishedAt: 0n,
    exitCode: state === ContainerState.CONTAINER_EXITED ? 3 : 0,
    image: { image: 'busybox', annotations: {}, userSpecifiedImage: '', runtimeHandler: '' },
    imageRef: 'ref',
    reason: '',
    message: '',
    labels: {},
    annotations: {},
    mounts: [],
    logPath: '',
    imageId: '',
  } as unknown as ContainerStatus;
}

function event(
  type: ContainerEventType,
  containerId: string,
  atMs: number,
  containers: ContainerStatus[],
  uid = 'u1',
): ContainerEventResponse {
  return {
    containerId,
    containerEventType: type,
    createdAt: BigInt(atMs) * MS,
    podSandboxStatus: {
      id: SB,
      metadata: { name: 'p', namespace: 'ns', uid, attempt: 0 },
      state: PodSandboxState.SANDBOX_READY,
      createdAt: 1n,
      network: { ip: '10.1.0.9', additionalIps: [] },
      labels: {},
      annotations: {},
      runtimeHandler: '',
      containersStatuses: [],
      timestamp: 0n,
    },
    containersStatuses: containers,
  } as unknown as ContainerEventResponse;
}

/** A watcher over a scripted stream; flushes synchronously after each event. */
async function run(cache: PodStatusCache, events: ContainerEventResponse[], now = 10_000) {
  const batches: ContainerEventBatch[] = [];
  const watcher = new ContainerEventWatcher({
    open: () => ({
      events: (async function* () {
        yield* events;
      })(),
      cancel: () => undefined,
    }),
    cache,
    now: () => now,
    deliver: (b) => batches.push(b),
    defer: (fn) => fn(),
  });
  const outcome = await watcher.watch();
  return { outcome, batches, events: batches.flatMap((b) => b.events), unslotted: batches.flatMap((b) => b.unslotted) };
}

describe('ContainerEventWatcher', () => {
  it.each([
    [ContainerEventType.CONTAINER_CREATED_EVENT, []],
    [ContainerEventType.CONTAINER_STARTED_EVENT, ['ContainerStarted']],
    [ContainerEventType.CONTAINER_STOPPED_EVENT, ['ContainerDied']],
    [ContainerEventType.CONTAINER_DELETED_EVENT, ['ContainerDied', 'ContainerRemoved']],
  ])('event type %i: caches the status it carries, then reports %j', async (type, expected) => {
    const cache = PodStatusCache.create({ capacity: 4 });
    const slot = cache.allocate('u1');
    const r = await run(cache, [event(type, 'c1', 5000, [container('c1', ContainerState.CONTAINER_RUNNING)])]);
    expect(r.events.map((e) => e.type)).toEqual(expected);
    expect(r.events.every((e) => e.id === 'u1' && e.data === 'c1')).toBe(true);
    const status = cache.read(slot, 'u1')!;
    expect(status).toMatchObject({ name: 'p', namespace: 'ns', ips: ['10.1.0.9'], timestamp: 5000 });
    expect(status.containerStatuses[0]).toMatchObject({ id: 'c1', state: 'running', sandboxId: SB });
    expect(r.outcome).toEqual({ cancelled: false, received: 1 });
    expect(r.batches[0].lagMs).toEqual([5000]);
  });

  it('does not report a status older than the cached one (upstream cache.Set with the evented PLEG)', async () => {
    const cache = PodStatusCache.create({ capacity: 4 });
    const slot = cache.allocate('u1');
    await run(cache, [event(ContainerEventType.CONTAINER_STOPPED_EVENT, 'c1', 5000, [container('c1', ContainerState.CONTAINER_EXITED)])]);
    const r = await run(cache, [
      event(ContainerEventType.CONTAINER_STARTED_EVENT, 'c1', 4000, [container('c1', ContainerState.CONTAINER_RUNNING)]),
    ]);
    expect(r.events).toEqual([]);
    expect(cache.read(slot, 'u1')!.containerStatuses[0].state).toBe('exited');
  });

  it('hands the status of a pod without a cache slot to the main thread, with its events', async () => {
    const cache = PodStatusCache.create({ capacity: 4 });
    const r = await run(cache, [
      event(ContainerEventType.CONTAINER_STARTED_EVENT, 'c1', 5000, [container('c1', ContainerState.CONTAINER_RUNNING)], 'new'),
    ]);
    expect(r.unslotted.map((s) => s.uid)).toEqual(['new']);
    expect(r.events.map((e) => e.type)).toEqual(['ContainerStarted']);
  });

  it('marks a sandbox deletion and ignores an event without sandbox status', async () => {
    const cache = PodStatusCache.create({ capacity: 4 });
    cache.allocate('u1');
    const gone = { ...event(ContainerEventType.CONTAINER_STOPPED_EVENT, 'c9', 1, []), podSandboxStatus: undefined };
    const r = await run(cache, [gone, event(ContainerEventType.CONTAINER_DELETED_EVENT, SB, 6000, [])]);
    expect(r.batches.flatMap((b) => b.sandboxDeleted)).toEqual(['u1']);
    expect(r.events.map((e) => `${e.type}:${e.data}`)).toEqual([`ContainerDied:${SB}`, `ContainerRemoved:${SB}`]);
    expect(r.outcome.received).toBe(2);
  });

  it('reports a stream error in its outcome instead of throwing', async () => {
    const cache = PodStatusCache.create({ capacity: 4 });
    const watcher = new ContainerEventWatcher({
      open: () => {
        throw Object.assign(new Error('unknown method'), { grpcCode: 12 });
      },
      cache,
      now: () => 0,
      deliver: () => undefined,
    });
    const outcome = await watcher.watch();
    expect(outcome.cancelled).toBe(false);
    expect(outcome.error?.message).toMatch(/unknown method/);
  });
});
