/**
 * CriRuntime.getPodStatus with the ids and states a relist listed, and the
 * pod's cached status: which objects it reads again through CRI and which
 * cached statuses it keeps.
 */
import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/common/clock.js';
import { ContainerState, PodSandboxState } from '../../src/gen/runtime/v1/api.js';
import { CriRuntime } from '../../src/runtime/cri-runtime.js';
import type { ContainerState as State, KnownPodIds, PodStatus, SandboxState } from '../../src/runtime/types.js';
import { FakeCri } from '../fakes/fake-cri.js';

const CRI_CONTAINER: Record<State, ContainerState> = {
  created: ContainerState.CONTAINER_CREATED,
  running: ContainerState.CONTAINER_RUNNING,
  exited: ContainerState.CONTAINER_EXITED,
  unknown: ContainerState.CONTAINER_UNKNOWN,
};

/** A CRI whose sandbox sb1 and container c1 are in the given states now. */
function criWith(sandbox: SandboxState, container: State): FakeCri {
  const cri = new FakeCri();
  cri.handlers.podSandboxStatus = async (r) => ({
    status: {
      id: r.podSandboxId,
      state: sandbox === 'ready' ? PodSandboxState.SANDBOX_READY : PodSandboxState.SANDBOX_NOTREADY,
      createdAt: 1n,
      network: { ip: '10.1.0.9', additionalIps: [] },
    },
  });
  cri.handlers.containerStatus = async (r) => ({
    status: {
      id: r.containerId,
      state: CRI_CONTAINER[container],
      createdAt: 2n,
      startedAt: container === 'created' ? 0n : 3n,
      finishedAt: container === 'exited' ? 4n : 0n,
      exitCode: container === 'exited' ? 1 : 0,
      metadata: { name: 'app', attempt: 0 },
      labels: {},
      annotations: {},
      logPath: '',
      reason: '',
      message: '',
    },
  });
  return cri;
}

const known = (sandbox: SandboxState, container: State): KnownPodIds => ({
  sandboxes: [{ id: 'sb1', state: sandbox }],
  containers: [{ id: 'c1', sandboxId: 'sb1', state: container }],
});

async function cachedStatus(sandbox: SandboxState, container: State): Promise<PodStatus> {
  const cri = criWith(sandbox, container);
  return new CriRuntime(cri.api, realClock).getPodStatus('u1', 'p', 'ns', known(sandbox, container));
}

describe('CriRuntime.getPodStatus with a cached status', () => {
  const cases: {
    name: string;
    cached?: [SandboxState, State];
    listed: [SandboxState, State];
    withStates?: boolean;
    reads: string[];
  }[] = [
    { name: 'no cached status: reads both', listed: ['ready', 'running'], reads: ['podSandboxStatus', 'containerStatus'] },
    { name: 'nothing changed: reads nothing', cached: ['ready', 'running'], listed: ['ready', 'running'], reads: [] },
    {
      name: 'container started: reads only the container',
      cached: ['ready', 'created'],
      listed: ['ready', 'running'],
      reads: ['containerStatus'],
    },
    {
      name: 'container exited: reads only the container',
      cached: ['ready', 'running'],
      listed: ['ready', 'exited'],
      reads: ['containerStatus'],
    },
    {
      name: 'sandbox stopped and container exited: reads both',
      cached: ['ready', 'running'],
      listed: ['notready', 'exited'],
      reads: ['podSandboxStatus', 'containerStatus'],
    },
    { name: 'unknown state is always read', cached: ['ready', 'unknown'], listed: ['ready', 'unknown'], reads: ['containerStatus'] },
    {
      name: 'ids without listed states (older callers): reads both',
      cached: ['ready', 'running'],
      listed: ['ready', 'running'],
      withStates: false,
      reads: ['podSandboxStatus', 'containerStatus'],
    },
  ];
  it.each(cases)('$name', async ({ cached, listed, withStates = true, reads }) => {
    const previous = cached ? await cachedStatus(...cached) : undefined;
    const cri = criWith(...listed);
    let ids = known(...listed);
    if (!withStates)
      ids = {
        sandboxes: ids.sandboxes.map(({ id }) => ({ id })),
        containers: ids.containers.map(({ id, sandboxId }) => ({ id, sandboxId })),
      };
    const status = await new CriRuntime(cri.api, realClock).getPodStatus('u1', 'p', 'ns', ids, previous);
    expect(cri.methods().sort()).toEqual([...reads].sort());
    // The result is the same as reading everything.
    const full = await new CriRuntime(criWith(...listed).api, realClock).getPodStatus('u1', 'p', 'ns', known(...listed));
    expect({ ...status, timestamp: 0 }).toEqual({ ...full, timestamp: 0 });
  });

  it('does not alias the cached objects', async () => {
    const previous = await cachedStatus('ready', 'running');
    const status = await new CriRuntime(criWith('ready', 'running').api, realClock).getPodStatus(
      'u1',
      'p',
      'ns',
      known('ready', 'running'),
      previous,
    );
    expect(status.containerStatuses[0]).not.toBe(previous.containerStatuses[0]);
    expect(status.sandboxStatuses[0]).not.toBe(previous.sandboxStatuses[0]);
  });

  it('an object the cached status does not hold is read', async () => {
    const previous = await cachedStatus('ready', 'running');
    const cri = criWith('ready', 'running');
    const ids: KnownPodIds = {
      ...known('ready', 'running'),
      containers: [...known('ready', 'running').containers, { id: 'c2', sandboxId: 'sb1', state: 'running' }],
    };
    const status = await new CriRuntime(cri.api, realClock).getPodStatus('u1', 'p', 'ns', ids, previous);
    expect(cri.callsOf('containerStatus')).toEqual([{ containerId: 'c2' }]);
    expect(status.containerStatuses.map((c) => c.id).sort()).toEqual(['c1', 'c2']);
  });
});
