/**
 * Removes dead containers of a pod when one of them dies (upstream
 * podContainerDeletor, triggered by PLEG ContainerDied): of the exited
 * containers with the dead container's name, the newest `keep` stay (status
 * needs the last one for lastState) and older ones are removed; once the
 * pod's content may be removed, all exited containers go.
 */
import type { Logger } from 'pino';
import type { PodStatus } from '../../runtime/types.js';
import type { TaskRunner } from '../../workers/task-runner.js';

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

export class ContainerDeletor {
  constructor(
    private readonly runner: TaskRunner,
    private readonly logger: Logger,
    /** Directory of the container log links ('' = none). */
    private readonly containerLogsDir = '',
  ) {}

  /** Fire-and-forget: failures are logged; the next death or GC round retries. */
  deleteContainersInPod(exitedId: string, status: PodStatus, removeAll: boolean): void {
    const ids = containersToDeleteInPod(removeAll ? '' : exitedId, status, removeAll ? 0 : DEAD_CONTAINERS_TO_KEEP);
    if (ids.length === 0) return;
    this.runner.run({ type: 'removeContainers', ids, containerLogsDir: this.containerLogsDir }).catch((err: unknown) => {
      this.logger.error({ podUID: status.uid, containers: ids, err: String(err) }, 'Failed to remove dead containers');
    });
  }
}
