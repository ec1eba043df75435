/**
 * The worker side of container garbage collection (upstream kuberuntime_gc.go):
 * gcList lists what the runtime has, gcRemove removes what the main thread
 * selected (src/main/kubelet/container-gc-select.ts).
 */
import { danglingLinks, unlinkContainerLog } from '../logs/legacy-log-link.js';
import { rmSync } from 'node:fs';
import { CriNotFoundError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { CriApi } from '../../cri/client.js';
import { ContainerState, PodSandboxState } from '../../gen/runtime/v1/api.js';
import { LABEL_POD_UID } from '../../runtime/types.js';
import type { GcContainer, GcRemoval, GcResult, GcSandbox } from '../protocol/gc-wire.js';
import { removeContainers } from './kill-pod.js';

/** The pod-owned containers and sandboxes the runtime has (one list each). */
export async function gcList(cri: CriApi): Promise<{ containers: GcContainer[]; sandboxes: GcSandbox[] }> {
  const [boxes, containers] = await Promise.all([cri.listPodSandbox({}), cri.listContainers({})]);
  return {
    containers: containers.containers
      .filter((c) => c.labels[LABEL_POD_UID])
      .map((c) => ({
        id: c.id,
        uid: c.labels[LABEL_POD_UID],
        name: c.metadata?.name ?? '',
        sandboxId: c.podSandboxId,
        running: c.state === ContainerState.CONTAINER_RUNNING,
        createdAt: BigInt(c.createdAt),
      })),
    sandboxes: boxes.items
      .filter((s) => s.metadata?.uid || s.labels[LABEL_POD_UID])
      .map((s) => ({
        id: s.id,
        uid: s.metadata?.uid || s.labels[LABEL_POD_UID],
        ready: s.state === PodSandboxState.SANDBOX_READY,
        createdAt: BigInt(s.createdAt),
      })),
  };
}

/**
 * Removes what the main thread selected: containers (with their logs),
 * sandboxes (each stopped first, as upstream, and never removed if the stop
 * failed), pod log directories. Every item is attempted; failures are listed.
 */
export async function gcRemove(cri: CriApi, r: GcRemoval): Promise<GcResult> {
  const result: GcResult = { containers: 0, sandboxes: 0, logDirectories: 0, errors: [] };
  const note = (what: string, err: unknown) => result.errors.push(`${what}: ${errorMessage(err)}`);
  for (const id of r.containers ?? []) {
    try {
      await removeContainers(cri, [id], r.containerLogsDir);
      result.containers++;
    } catch (err) {
      note(`remove container ${id}`, err);
    }
  }
  for (const id of r.sandboxes ?? []) {
    try {
      await cri.stopPodSandbox({ podSandboxId: id });
      await cri.removePodSandbox({ podSandboxId: id });
      result.sandboxes++;
    } catch (err) {
      note(`remove sandbox ${id}`, err);
    }
  }
  for (const dir of r.logDirectories ?? []) {
    try {
      rmSync(dir, { recursive: true, force: true });
      result.logDirectories++;
    } catch (err) {
      note(`remove pod log directory ${dir}`, err);
    }
  }
  if (r.containerLogsDir) await removeDeadLinks(cri, r.containerLogsDir, note);
  return result;
}

/** Upstream's clean-up of dead container log links: dangling links whose container the runtime no longer has. */
async function removeDeadLinks(cri: CriApi, dir: string, note: (what: string, err: unknown) => void): Promise<void> {
  for (const { path, containerId } of danglingLinks(dir)) {
    try {
      await cri.containerStatus({ containerId });
    } catch (err) {
      if (err instanceof CriNotFoundError) unlinkContainerLog(path);
      else note(`check container of log link ${path}`, err);
    }
  }
}
