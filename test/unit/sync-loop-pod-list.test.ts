import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import type { PodHandlers } from '../../src/main/kubelet/handlers.js';
import { PodManager } from '../../src/main/podconfig/pod-manager.js';
import type { RuntimeState } from '../../src/main/kubelet/runtime-state.js';
import type { PodWorkers } from '../../src/main/pod-workers/pod-workers.js';
import type { PodConfig } from '../../src/main/podconfig/pod-config.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import { SyncLoop } from '../../src/main/kubelet/sync-loop.js';
import { FakeClock } from '../fakes/fake-clock.js';

const pod = (uid: string, phase?: string): Pod => ({
  metadata: { uid, name: uid, namespace: 'ns' },
  spec: { containers: [{ name: 'c' }] },
  ...(phase && { status: { phase } }),
});

describe('SyncLoop.podList (/pods)', () => {
  const podManager = new PodManager();
  const statusManager = new StatusManager();
  const loop = new SyncLoop({
    podConfig: {} as PodConfig,
    handlers: {} as PodHandlers,
    podWorkers: {} as PodWorkers,
    podManager,
    statusManager,
    runtimeState: {} as RuntimeState,
    clock: new FakeClock(),
    logger: pino({ level: 'silent' }),
  });

  it('gives each pod with the kubelet status (else its own, else none) and the same item while neither changes', () => {
    const a = pod('a');
    const b = pod('b', 'Pending');
    podManager.addOrUpdate(a);
    podManager.addOrUpdate(b);
    const first = loop.podList();
    expect(first).toEqual({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [{ ...a, status: {} }, b] });
    const again = loop.podList();
    expect(again.items[0]).toBe(first.items[0]);
    expect(again.items[1]).toBe(first.items[1]);

    statusManager.setPodStatus(a, { phase: 'Running' });
    const third = loop.podList();
    expect(third.items[0]).toEqual({ ...a, status: { phase: 'Running' } });
    expect(third.items[0]).not.toBe(first.items[0]);
    expect(third.items[1]).toBe(first.items[1]);

    const b2 = { ...pod('b', 'Pending'), spec: { containers: [{ name: 'c2' }] } };
    podManager.addOrUpdate(b2);
    expect(loop.podList().items[1]).toEqual(b2);
  });
});
