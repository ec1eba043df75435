import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ContainerDeletor, containersToDeleteInPod } from '../../src/main/kubelet/container-deletor.js';
import type { TaskRequest } from '../../src/workers/protocol/protocol.js';
import type { ContainerStatus, PodStatus } from '../../src/runtime/types.js';

function c(id: string, name: string, state: ContainerStatus['state'], createdAt: number): ContainerStatus {
  return {
    id,
    name,
    state,
    createdAt: BigInt(createdAt),
    startedAt: 0n,
    finishedAt: 0n,
    exitCode: 0,
    reason: '',
    message: '',
    image: '',
    imageRef: '',
    restartCount: 0,
    hash: '',
    sandboxId: 's',
  };
}

const status: PodStatus = {
  uid: 'u',
  name: 'p',
  namespace: 'n',
  ips: [],
  sandboxStatuses: [],
  timestamp: 0,
  containerStatuses: [
    c('a1', 'a', 'exited', 1),
    c('a2', 'a', 'exited', 2),
    c('a3', 'a', 'exited', 3),
    c('a4', 'a', 'running', 4),
    c('b1', 'b', 'exited', 1),
    c('b2', 'b', 'exited', 2),
  ],
};

describe('containersToDeleteInPod (upstream getContainersToDeleteInPod)', () => {
  it.each([
    ['keeps the newest dead instance of the dead container’s name', 'a3', 1, ['a2', 'a1']],
    ['only considers the same name', 'b2', 1, ['b1']],
    ['keeps everything within the keep count', 'b2', 2, []],
    ['an unknown id deletes nothing', 'zz', 1, []],
    ['removeAll (id "", keep 0) deletes every exited container, never running ones', '', 0, ['a3', 'b2', 'a2', 'a1', 'b1']],
  ])('%s', (_name, id, keep, expected) => {
    const got = containersToDeleteInPod(id, status, keep);
    if (id === '') expect(got.sort()).toEqual([...expected].sort());
    else expect(got).toEqual(expected);
  });
});

/** A pino logger whose records (with their numeric level) the test reads. */
function captureLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as { level: number; msg: string }) });
  return { logger, lines };
}

describe('ContainerDeletor (upstream podContainerDeletor: one worker)', () => {
  /** A runner that removes like containerd: a second RemoveContainer of a container being removed fails. */
  function runtime() {
    const removing = new Set<string>();
    const removed: string[] = [];
    let release = () => {};
    let gate = new Promise<void>((r) => (release = r));
    const runner = {
      run: async (req: TaskRequest) => {
        if (req.type !== 'removeContainers') throw new Error(`unexpected task ${req.type}`);
        for (const id of req.ids) {
          if (removing.has(id))
            throw new Error(`failed to set removing state for container "${id}": container is already in removing state`);
          removing.add(id);
        }
        await gate;
        for (const id of req.ids) {
          removing.delete(id);
          removed.push(id);
        }
        return { removed: req.ids.length };
      },
    };
    return {
      runner: runner as never,
      removed,
      open: () => {
        release();
        gate = Promise.resolve();
      },
    };
  }

  it('a deleted pod’s ContainerDied events, each asking for every dead container, remove each container once and log nothing', async () => {
    const rt = runtime();
    const { logger, lines } = captureLogger();
    const deletor = new ContainerDeletor(rt.runner, logger);
    // Two containers die as the pod is deleted: both events see the same exited containers.
    deletor.deleteContainersInPod('a3', status, true);
    deletor.deleteContainersInPod('b2', status, true);
    deletor.deleteContainersInPod('b2', status, true);
    rt.open();
    await deletor.idle();
    expect(rt.removed.sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });

  it('a container asked for again after its removal is removed again (a later death), and a failure is a warning', async () => {
    const rt = runtime();
    rt.open();
    const { logger, lines } = captureLogger();
    const failing = { run: async () => Promise.reject(new Error('boom')) } as never;
    const deletor = new ContainerDeletor(rt.runner, pino({ level: 'silent' }));
    deletor.deleteContainersInPod('b2', status, false);
    await deletor.idle();
    deletor.deleteContainersInPod('b2', status, false);
    await deletor.idle();
    expect(rt.removed).toEqual(['b1', 'b1']);
    const broken = new ContainerDeletor(failing, logger);
    broken.deleteContainersInPod('b2', status, false);
    await broken.idle();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([[40, 'Failed to remove dead containers']]);
  });
});
