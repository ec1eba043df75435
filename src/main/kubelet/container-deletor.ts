/**
 * Removes dead containers of a pod when one of them dies (upstream
 * podContainerDeletor, triggered by PLEG ContainerDied): of the exited
 * containers with the dead container's name, the newest `keep` stay (status
 * needs the last one for lastState) and older ones are removed; once the
 * pod's content may be removed, all exited containers go.
 *
 * As upstream's, removals go through one worker, one batch at a time, and a
 * container already queued or being removed is not asked for again: when a
 * pod is deleted, each of its containers' ContainerDied asks for all of its
 * dead containers, and two RemoveContainer calls for the same container at
 * once make containerd fail the second ("container is already in removing
 * state"). The queue is bounded (upstream containerDeletorBufferLimit);
 * what does not fit is left to the next death or container GC.
 */
import type { Logger } from 'pino';
import type { PodStatus } from '../../runtime/types.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import { errorMessage } from '../../common/error-message.js';

/** upstream minDeadContainerInPod / MaxPerPodContainer default. */
export const DEAD_CONTAINERS_TO_KEEP = 1;

/** upstream getContainersToDeleteInPod. `exitedId` '' means any name. */
export function containersToDeleteInPod(exitedId: string, status: PodStatus, keep: number): string[] {
  const matched = exitedId ? status.containerStatuses.find((c) => c.id === exitedId) : undefined;
  if (exitedId && !matched) return [];
  const candidates = status.containerStatuses
    .filter((c) => c.state === 'exited' && (!matched || c.name === matched.name))
    .sort((a, b) => (a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0));
  return candidates.length <= keep ? [] : candidates.slice(keep).map((c) => c.id);
}

/** upstream containerDeletorBufferLimit. */
export const DELETOR_QUEUE_LIMIT = 50;

export class ContainerDeletor {
  /** Ids waiting for the worker, in order. */
  private readonly queue: string[] = [];
  /** Ids queued or being removed. */
  private readonly pending = new Set<string>();
  private working = false;

  constructor(
    private readonly runner: Pick<TaskRunner, 'run'>,
    private readonly logger: Logger,
    /** Directory of the container log links ('' = none). */
    private readonly containerLogsDir = '',
  ) {}

  /** Fire-and-forget: failures are logged; the next death or GC round retries. */
  deleteContainersInPod(exitedId: string, status: PodStatus, removeAll: boolean): void {
    const ids = containersToDeleteInPod(removeAll ? '' : exitedId, status, removeAll ? 0 : DEAD_CONTAINERS_TO_KEEP);
    for (const id of ids) {
      if (this.pending.has(id)) continue;
      if (this.queue.length >= DELETOR_QUEUE_LIMIT) {
        this.logger.warn({ podUID: status.uid, containerID: id }, 'Failed to issue the request to remove container');
        continue;
      }
      this.pending.add(id);
      this.queue.push(id);
    }
    if (!this.working && this.queue.length > 0) {
      this.working = true;
      this.work().catch((err: unknown) => this.logger.error({ err }, 'Container deletor stopped'));
    }
  }

  /** Resolves when nothing is queued or being removed (for tests and shutdown). */
  idle(): Promise<void> {
    return this.drained ?? Promise.resolve();
  }

  private drained: Promise<void> | undefined;

  private async work(): Promise<void> {
    let done = () => {};
    this.drained = new Promise<void>((r) => (done = r));
    try {
      while (this.queue.length > 0) {
        const ids = this.queue.splice(0);
        try {
          await this.runner.run({ type: 'removeContainers', ids, containerLogsDir: this.containerLogsDir });
        } catch (err) {
          this.logger.warn({ containers: ids, err: errorMessage(err) }, 'Failed to remove dead containers');
        } finally {
          for (const id of ids) this.pending.delete(id);
        }
      }
    } finally {
      this.working = false;
      this.drained = undefined;
      done();
    }
  }
}
