import type { CriApi } from '../cri/client.js';
import { CriNotFoundError } from '../common/errors.js';
import type { Clock } from '../common/clock.js';
import { groupPods, newestFirst, toContainerStatus, toSandboxStatus } from './convert.js';
import { decodeListedContainers, decodeListedSandboxes } from './relist-wire.js';
import { capMessages, terminationMessage } from './termination-message.js';
import type { Runtime } from './runtime.js';
import { LABEL_POD_UID, type ContainerStatus, type KnownPodIds, type PodStatus, type RuntimePod, type SandboxStatus } from './types.js';

/** The Runtime over a CRI client (upstream kubeGenericRuntimeManager's read side). */
export class CriRuntime implements Runtime {
  constructor(
    private readonly cri: CriApi,
    private readonly clock: Clock,
  ) {}

  async getPods(): Promise<RuntimePod[]> {
    const [sandboxes, containers] = await Promise.all([
      this.cri.callDecoded('listPodSandbox', decodeListedSandboxes, {}),
      this.cri.callDecoded('listContainers', decodeListedContainers, {}),
    ]);
    return groupPods(sandboxes, containers);
  }

  async getPodStatus(uid: string, name: string, namespace: string, known?: KnownPodIds, previous?: PodStatus): Promise<PodStatus> {
    const timestamp = this.clock.now();
    let ids: KnownPodIds;
    if (known) {
      ids = known;
    } else {
      const selector = { labelSelector: { [LABEL_POD_UID]: uid } };
      const [boxes, containers] = await Promise.all([
        this.cri.listPodSandbox({ filter: selector }),
        this.cri.listContainers({ filter: selector }),
      ]);
      ids = {
        sandboxes: boxes.items.map((s) => ({ id: s.id })),
        containers: containers.containers.map((c) => ({ id: c.id, sandboxId: c.podSandboxId })),
      };
    }
    // Objects removed between the list and the status call are skipped: the
    // next relist reports their removal.
    const sandboxStatuses = (
      await Promise.all(
        ids.sandboxes.map(
          async (b) =>
            reusable(previous?.sandboxStatuses, b.id, b.state) ??
            this.cri
              .podSandboxStatus({ podSandboxId: b.id })
              .then((r) => (r.status ? toSandboxStatus(r.status) : undefined), ignoreNotFound),
        ),
      )
    ).filter((s): s is SandboxStatus => s !== undefined);
    sandboxStatuses.sort(newestFirst);
    const containerStatuses = (
      await Promise.all(
        ids.containers.map(
          async (c) =>
            reusable(previous?.containerStatuses, c.id, c.state) ??
            this.cri.containerStatus({ containerId: c.id }).then(async (r) => {
              if (!r.status) return undefined;
              const s = toContainerStatus(r.status, c.sandboxId);
              // upstream: an exited container's termination message is appended to the runtime's message.
              const tMessage = await terminationMessage(r.status);
              if (tMessage) s.message = s.message ? `${s.message}: ${tMessage}` : tMessage;
              return s;
            }, ignoreNotFound),
        ),
      )
    ).filter((s): s is ContainerStatus => s !== undefined);
    containerStatuses.sort(newestFirst);
    const capped = capMessages(containerStatuses.map((s) => s.message));
    containerStatuses.forEach((s, i) => (s.message = capped[i]!));
    const ready = sandboxStatuses.find((s) => s.state === 'ready');
    return {
      uid,
      name,
      namespace,
      ips: ready?.ips ?? [],
      sandboxStatuses,
      containerStatuses,
      timestamp,
    };
  }
}

/**
 * The cached status of `id` when the list saw it in the same state it had
 * then ('unknown' is always read again), as a copy: the caller sorts and edits.
 */
function reusable<S extends { id: string; state: string }>(cached: S[] | undefined, id: string, listed: string | undefined): S | undefined {
  if (!cached || listed === undefined || listed === 'unknown') return undefined;
  const hit = cached.find((s) => s.id === id);
  return hit && hit.state === listed ? { ...hit } : undefined;
}

function ignoreNotFound(err: unknown): undefined {
  if (err instanceof CriNotFoundError) return undefined;
  throw err;
}
