import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/runtime.js';
import type { PodStatus } from '../../src/runtime/types.js';
import { runTask, type TaskContext } from '../../src/workers/tasks.js';
import { PodStatusCache } from '../../src/shared/pod-status-cache.js';
import { writeInspection } from '../../src/workers/relist/write-inspection.js';
import { c, container, makePod, podStatus, sandbox } from '../helpers/sync-fixtures.js';

/** ms since the epoch → the runtime's ns. */
const ns = (ms: number) => BigInt(ms) * 1_000_000n;
const LISTED = 1_700_000_000_000; // the relist's start: its lists are taken after it

function setup() {
  const pod = makePod({ containers: [c('app'), c('side')] });
  const cache = PodStatusCache.create({ capacity: 4 });
  const slot = cache.allocate(pod.metadata.uid!);
  const sb = { ...sandbox('sb-1', 'ready'), createdAt: ns(LISTED - 500) };
  const at = (status: PodStatus, timestamp: number): PodStatus => ({ ...status, timestamp });
  const read = () => cache.read(slot, pod.metadata.uid)!;
  return { pod, cache, slot, sb, at, read };
}

describe('writeInspection', () => {
  it('keeps a container a sync started and published after the relist listed the pod, under the inspection timestamp', () => {
    const { pod, cache, slot, sb, at, read } = setup();
    const app = container(pod, 'app', 'running', { createdAt: ns(LISTED + 40), sandboxId: 'sb-1' });
    // The sync's publish: its sandbox and the container it started, read after the relist's lists.
    cache.write(slot, at(podStatus(pod, [sb], [app]), LISTED + 50));
    // The relist listed the sandbox only (the container did not exist yet).
    writeInspection(cache, slot, at(podStatus(pod, [sb], []), LISTED));
    expect(read().containerStatuses.map((s) => [s.id, s.state])).toEqual([[app.id, 'running']]);
    expect(read().sandboxStatuses.map((s) => s.id)).toEqual(['sb-1']);
    expect(read().timestamp).toBe(LISTED);
  });

  it('drops what the entry has that was created before the lists and is not in them (removed since)', () => {
    const { pod, cache, slot, sb, at, read } = setup();
    const gone = container(pod, 'side', 'exited', { createdAt: ns(LISTED - 100), sandboxId: 'sb-1' });
    const old = { ...sandbox('sb-0', 'notready'), createdAt: ns(LISTED - 900) };
    cache.write(slot, at(podStatus(pod, [sb, old], [gone]), LISTED + 50));
    writeInspection(cache, slot, at(podStatus(pod, [sb], []), LISTED));
    expect(read().containerStatuses).toEqual([]);
    expect(read().sandboxStatuses.map((s) => s.id)).toEqual(['sb-1']);
  });

  it('keeps the later state of a container the entry saw after the inspection did', () => {
    const { pod, cache, slot, sb, at, read } = setup();
    const created = container(pod, 'app', 'created', { createdAt: ns(LISTED - 10), sandboxId: 'sb-1' });
    const running = { ...created, state: 'running' as const, startedAt: ns(LISTED + 30) };
    cache.write(slot, at(podStatus(pod, [sb], [running]), LISTED + 50));
    writeInspection(cache, slot, at(podStatus(pod, [sb], [created]), LISTED));
    expect(read().containerStatuses.map((s) => s.state)).toEqual(['running']);
    // ... but not an earlier one.
    cache.write(slot, at(podStatus(pod, [sb], [created]), LISTED + 100));
    const exited = { ...created, state: 'exited' as const, finishedAt: ns(LISTED + 60), exitCode: 1 };
    writeInspection(cache, slot, at(podStatus(pod, [sb], [exited]), LISTED + 10));
    expect(read().containerStatuses.map((s) => [s.state, s.exitCode])).toEqual([['exited', 1]]);
  });

  it('keeps a sandbox the entry saw stopped after the inspection saw it ready, with no pod IPs', () => {
    const { pod, cache, slot, sb, at, read } = setup();
    cache.write(slot, at(podStatus(pod, [{ ...sb, state: 'notready', ips: [] }], []), LISTED + 50));
    writeInspection(cache, slot, at(podStatus(pod, [sb], []), LISTED));
    expect(read().sandboxStatuses.map((s) => s.state)).toEqual(['notready']);
    expect(read().ips).toEqual([]);
  });

  it('takes the IPs of a newer ready sandbox the entry has', () => {
    const { pod, cache, slot, at, read } = setup();
    const dead = { ...sandbox('sb-1', 'notready'), createdAt: ns(LISTED - 500) };
    const fresh = { ...sandbox('sb-2', 'ready', 1), createdAt: ns(LISTED + 20), ips: ['10.1.0.77'] };
    cache.write(slot, at(podStatus(pod, [fresh, dead], []), LISTED + 50));
    writeInspection(cache, slot, at(podStatus(pod, [dead], []), LISTED));
    expect(read().sandboxStatuses.map((s) => s.id)).toEqual(['sb-2', 'sb-1']);
    expect(read().ips).toEqual(['10.1.0.77']);
  });

  it('replaces an older entry as it is (upstream cache.Set)', () => {
    const { pod, cache, slot, sb, at, read } = setup();
    const stale = container(pod, 'app', 'running', { createdAt: ns(LISTED - 300), sandboxId: 'sb-1' });
    cache.write(slot, at(podStatus(pod, [sb], [stale]), LISTED - 200));
    const inspected = at(podStatus(pod, [sb], []), LISTED);
    writeInspection(cache, slot, inspected);
    expect(read()).toEqual(inspected);
  });

  it('merges again onto an entry written between its read and its write', () => {
    const { pod, cache, slot, sb, at, read } = setup();
    const app = container(pod, 'app', 'running', { createdAt: ns(LISTED + 40), sandboxId: 'sb-1' });
    const write = cache.write.bind(cache);
    let raced = false;
    cache.write = (s, status, options) => {
      if (!raced) {
        raced = true;
        write(slot, at(podStatus(pod, [sb], [app]), LISTED + 50)); // the publish lands first
      }
      return write(s, status, options);
    };
    writeInspection(cache, slot, at(podStatus(pod, [sb], []), LISTED));
    expect(read().containerStatuses.map((s) => s.id)).toEqual([app.id]);
  });
});

describe('the inspect task', () => {
  /** Inspects the pod of `setup()` by the relist's ids (sandbox sb-1 only, listed at LISTED); the runtime reads `found`. */
  const inspectListed = (t: ReturnType<typeof setup>, found: PodStatus) => {
    const runtime = { getPodStatus: async () => found } as unknown as Runtime;
    const m = t.pod.metadata;
    const known = { sandboxes: [{ id: 'sb-1', state: 'ready' as const }], containers: [] };
    return runTask({ runtime, cache: t.cache } as unknown as TaskContext, {
      type: 'inspect',
      pods: [{ uid: m.uid!, name: m.name!, namespace: m.namespace!, slot: t.slot, known, listedAt: LISTED }],
    });
  };

  it('writes through writeInspection: a container published after the relist listed the pod stays in its entry', async () => {
    const t = setup();
    const { pod, cache, slot, sb, at, read } = t;
    const app = container(pod, 'app', 'running', { createdAt: ns(LISTED + 40), sandboxId: 'sb-1' });
    cache.write(slot, at(podStatus(pod, [sb], [app]), LISTED + 50));
    // The runtime read (after the publish) by the relist's ids, which did not include the container.
    const result = await inspectListed(t, at(podStatus(pod, [sb], []), LISTED + 100));
    expect(result).toEqual({ ok: true, value: { outcomes: [{ uid: pod.metadata.uid, empty: false }] } });
    expect(read().containerStatuses.map((s) => s.id)).toEqual([app.id]);
    expect(read().timestamp).toBe(LISTED);
  });

  it('does not report a pod gone (its slot freed) when a sandbox was published after the lists that found nothing', async () => {
    const t = setup();
    const { pod, cache, slot, at, read } = t;
    const fresh = { ...sandbox('sb-2', 'ready', 1), createdAt: ns(LISTED + 20) };
    cache.write(slot, at(podStatus(pod, [fresh], []), LISTED + 50));
    const result = await inspectListed(t, at(podStatus(pod, [], []), LISTED + 100));
    expect(result).toEqual({ ok: true, value: { outcomes: [{ uid: pod.metadata.uid, empty: false }] } });
    expect(read().sandboxStatuses.map((s) => s.id)).toEqual(['sb-2']);
  });
});
