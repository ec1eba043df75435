/**
 * Stopping a pod (upstream killPodWithSyncResult): every running container is
 * stopped in parallel with the grace period, then every sandbox. Optionally
 * removes them afterwards (a pod deleted from all sources).
 */
import type { CriApi } from '../../cri/client.js';
import { CriNotFoundError } from '../../common/errors.js';
import type { PodStatus } from '../../runtime/types.js';
import type { PodEvent } from './sync-types.js';

/** upstream minimumGracePeriodInSeconds */
export const MIN_GRACE_PERIOD_SECONDS = 2;

const ignoreNotFound = (err: unknown) => {
  if (!(err instanceof CriNotFoundError)) throw err;
};

export async function stopContainer(cri: CriApi, id: string, gracePeriodSeconds: number): Promise<void> {
  const grace = Math.max(MIN_GRACE_PERIOD_SECONDS, Math.floor(gracePeriodSeconds));
  // The call itself may take the whole grace period; allow for it in the deadline.
  await cri.stopContainer({ containerId: id, timeout: BigInt(grace) }, { timeoutMs: grace * 1000 + 120_000 }).catch(ignoreNotFound);
}

export interface KillPodResult {
  stoppedContainers: number;
  stoppedSandboxes: number;
  events: PodEvent[];
}

export async function killPod(
  cri: CriApi,
  status: PodStatus,
  gracePeriodSeconds: number,
  reason = 'Stopping container',
): Promise<KillPodResult> {
  const running = status.containerStatuses.filter((c) => c.state === 'running' || c.state === 'unknown' || c.state === 'created');
  const events: PodEvent[] = running.map((c) => ({ type: 'Normal', reason: 'Killing', message: `${reason} ${c.name}` }));
  await Promise.all(running.map((c) => stopContainer(cri, c.id, gracePeriodSeconds)));
  const ready = status.sandboxStatuses.filter((s) => s.state === 'ready');
  await Promise.all(ready.map((s) => cri.stopPodSandbox({ podSandboxId: s.id }).catch(ignoreNotFound)));
  return { stoppedContainers: running.length, stoppedSandboxes: ready.length, events };
}

/** Removes the given (dead) containers; ones already gone are not an error. */
export async function removeContainers(cri: CriApi, ids: string[]): Promise<number> {
  await Promise.all(ids.map((id) => cri.removeContainer({ containerId: id }).catch(ignoreNotFound)));
  return ids.length;
}

/** Removes every sandbox of the pod (which removes its containers) and any container left over. */
export async function removePod(cri: CriApi, status: PodStatus): Promise<void> {
  await removeContainers(
    cri,
    status.containerStatuses.map((c) => c.id),
  );
  await Promise.all(status.sandboxStatuses.map((s) => cri.removePodSandbox({ podSandboxId: s.id }).catch(ignoreNotFound)));
}
