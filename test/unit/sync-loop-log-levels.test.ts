import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { createLogger } from '../../src/common/logger.js';
import type { PodHandlers } from '../../src/main/kubelet/handlers.js';
import type { RuntimeState } from '../../src/main/kubelet/runtime-state.js';
import { Wakeup } from '../../src/common/wakeup.js';
import { SyncLoop } from '../../src/main/kubelet/sync-loop.js';
import type { PodWorkers } from '../../src/main/pod-workers/pod-workers.js';
import type { PodConfig } from '../../src/main/podconfig/pod-config.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import type { StatusManager } from '../../src/main/status/status-manager.js';
import { SyncLoopQueue } from '../../src/main/sync-loop/sync-loop-queue.js';
import { FakeClock } from '../fakes/fake-clock.js';

const pod: Pod = { metadata: { uid: 'uid-a', name: 'a', namespace: 'ns' }, spec: { containers: [{ name: 'c' }] } };

/** Runs one ADD, one RECONCILE and three PLEG events through a syncLoop at verbosity `v`; returns the messages logged. */
async function logged(v: number): Promise<{ msg: string; pod?: string }[]> {
  const lines: string[] = [];
  const logger = createLogger({ format: 'json', verbosity: v, destination: { write: (s: string) => lines.push(s) } });
  const podManager = new PodManager();
  podManager.addOrUpdate(pod);
  const handled: string[] = [];
  const queue = new SyncLoopQueue();
  const loop = new SyncLoop({
    podConfig: { updates: { iterate: async function* () {} }, seenAllSources: () => true } as unknown as PodConfig,
    handlers: {
      handlePodAdditions: () => handled.push('add'),
      handlePodReconcile: () => handled.push('reconcile'),
      handlePlegEvent: () => handled.push('pleg'),
      handlePodSyncs: () => undefined,
      podsToSync: () => [],
      handlePodCleanups: () => undefined,
    } as unknown as PodHandlers,
    podWorkers: { dueForResync: () => [] } as unknown as PodWorkers,
    podManager,
    statusManager: {} as StatusManager,
    runtimeState: { runtimeErrors: () => [], changes: new Wakeup() } as unknown as RuntimeState,
    clock: new FakeClock(),
    logger,
    queue,
  });
  const ac = new AbortController();
  loop.start(ac.signal);
  queue.pushConfig({ op: 'ADD', source: 'file', pods: [pod] });
  queue.pushConfig({ op: 'RECONCILE', source: 'file', pods: [pod] });
  queue.offerPleg({ id: 'uid-a', type: 'ContainerStarted', data: 'c1' });
  queue.offerPleg({ id: 'uid-gone', type: 'ContainerDied', data: 'c2' });
  queue.offerPleg({ id: 'uid-a', type: 'ContainerRemoved', data: 'c3' });
  const deadline = Date.now() + 10_000;
  while (handled.length < 5 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  ac.abort();
  await loop.stopped();
  expect(handled).toHaveLength(5);
  return lines
    .map((l) => JSON.parse(l) as { msg: string; pod?: string | string[] })
    .filter((r) => r.msg.startsWith('SyncLoop '))
    .map((r) => ({ msg: r.msg, ...(typeof r.pod === 'string' && { pod: r.pod }) }))
    .sort((a, b) => `${a.msg} ${a.pod}`.localeCompare(`${b.msg} ${b.pod}`)); // the loop takes pending kinds at random
}

describe('syncLoop log levels (upstream v1.20.2 syncLoopIteration)', () => {
  it('logs nothing of updates or PLEG events below V(2)', async () => {
    expect(await logged(1)).toEqual([]);
  });

  it('at V(2): each update but RECONCILE, and the sync-worthy PLEG event of a known pod, by name', async () => {
    expect(await logged(2)).toEqual([{ msg: 'SyncLoop (PLEG): event for pod', pod: 'ns/a' }, { msg: 'SyncLoop ADD' }]);
  });

  it('at V(4): RECONCILE too, and the PLEG event of an unknown pod as irrelevant; ContainerRemoved never', async () => {
    expect(await logged(4)).toEqual([
      { msg: 'SyncLoop (PLEG): event for pod', pod: 'ns/a' },
      { msg: 'SyncLoop (PLEG): ignore irrelevant event', pod: 'uid-gone' },
      { msg: 'SyncLoop ADD' },
      { msg: 'SyncLoop RECONCILE' },
    ]);
  });
});
