/**
 * The StreamingHost of the kubelet server over CRI: containers and sandboxes
 * are looked up in the runtime itself (upstream findContainer lists the
 * runtime's running pods), the one-time URLs come from CRI Exec, Attach and
 * PortForward, and /run is an ExecSync.
 */
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import type { CriApi } from '../../cri/client.js';
import { ContainerState, PodSandboxState } from '../../gen/runtime/v1/api.js';
import { LABEL_CONTAINER_NAME, LABEL_POD_UID, type PodStatus } from '../../runtime/types.js';
import type { StreamingHost } from './streaming.js';

export interface CriStreamingDeps {
  cri: Pick<CriApi, 'listContainers' | 'listPodSandbox' | 'exec' | 'attach' | 'portForward' | 'execSync'>;
  podByName(namespace: string, name: string): Pod | undefined;
  /** The pod's runtime status as the last relist saw it (the pod status cache), or undefined. */
  cachedStatus?(uid: string): Pick<PodStatus, 'containerStatuses'> | undefined;
  logger: Logger;
}

/** The newest of `items` by createdAt. */
function newest<T extends { id: string; createdAt: bigint }>(items: readonly T[]): string | undefined {
  let best: T | undefined;
  for (const i of items) if (!best || i.createdAt > best.createdAt) best = i;
  return best?.id;
}

export function criStreamingHost(d: CriStreamingDeps): StreamingHost {
  const { cri } = d;
  return {
    podByName: (namespace, name) => d.podByName(namespace, name),
    logger: d.logger,
    // Upstream's proxy has no idle timeout of its own (streamingConnectionIdleTimeout applies to dockershim only).
    idleTimeoutMs: 0,
    runningContainerId: async (pod, name) => {
      const { containers } = await cri.listContainers({
        filter: {
          state: { state: ContainerState.CONTAINER_RUNNING },
          labelSelector: { [LABEL_POD_UID]: pod.metadata.uid ?? '', [LABEL_CONTAINER_NAME]: name },
        },
      });
      return newest(containers);
    },
    ...(d.cachedStatus && {
      cachedRunningContainerId: (pod: Pod, name: string) =>
        newest((d.cachedStatus?.(pod.metadata.uid ?? '')?.containerStatuses ?? []).filter((c) => c.name === name && c.state === 'running')),
    }),
    readySandboxId: async (pod) => {
      const { items } = await cri.listPodSandbox({
        filter: { state: { state: PodSandboxState.SANDBOX_READY }, labelSelector: { [LABEL_POD_UID]: pod.metadata.uid ?? '' } },
      });
      return newest(items);
    },
    exec: async (containerId, cmd, o) => (await cri.exec({ containerId, cmd, ...o })).url,
    attach: async (containerId, o) => (await cri.attach({ containerId, ...o })).url,
    portForward: async (podSandboxId, port) => (await cri.portForward({ podSandboxId, port })).url,
    runInContainer: async (containerId, cmd) => {
      const r = await cri.execSync({ containerId, cmd, timeout: 0n });
      return Buffer.concat([r.stdout, r.stderr]);
    },
  };
}
