import { describe, expect, it } from 'vitest';
import { containersToDeleteInPod } from '../../src/main/kubelet/container-deletor.js';
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
