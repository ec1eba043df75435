/**
 * Stopping containers and pods (upstream kuberuntime killContainer,
 * killContainersWithSyncResult, killPodWithSyncResult,
 * restoreSpecsFromContainerLabels, setTerminationGracePeriod).
 *
 * killContainer: the preStop hook runs within the grace period and the time
 * it took is taken off it; a sidecar then waits for its turn (termination
 * order); the container gets at least 2 s to stop. killPod stops every
 * running container in parallel, then every sandbox of the pod, ready or not
 * (so CNI is torn down for a sandbox that died on its own). Nothing here
 * removes anything: removal is container GC's job, always after the stop.
 */
import { legacyLogLinkPath, unlinkContainerLog } from '../logs/legacy-log-link.js';
import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Container, Pod } from '../../api/pod.js';
import type { CriApi } from '../../cri/client.js';
import { CriNotFoundError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { PodStatus } from '../../runtime/types.js';
import { ANNOTATION_TERMINATION_GRACE } from '../../runtime/types.js';
import type { KillReason } from './compute-pod-actions.js';
import { ANNOTATION_DELETION_GRACE, ANNOTATION_PRESTOP_HANDLER } from './container-config.js';
import { hasRestartableInitContainer } from '../../pod/init-containers.js';
import { runHandler, type HookContext } from './lifecycle-hooks.js';
import type { PodEvent } from '../../pod/sync-types.js';
import { TerminationOrdering } from './termination-order.js';

/** upstream minimumGracePeriodInSeconds */
export const MIN_GRACE_PERIOD_SECONDS = 2;

const ignoreNotFound = (err: unknown) => {
  if (!(err instanceof CriNotFoundError)) throw err;
};

/** StopContainer with the grace period as its timeout; the call itself may take that long, so the deadline allows for it. */
export async function stopContainer(cri: CriApi, id: string, gracePeriodSeconds: number): Promise<void> {
  const grace = Math.max(MIN_GRACE_PERIOD_SECONDS, Math.floor(gracePeriodSeconds));
  await cri.stopContainer({ containerId: id, timeout: BigInt(grace) }, { timeoutMs: grace * 1000 + 120_000 }).catch(ignoreNotFound);
}

/** Upstream setTerminationGracePeriod: deletion grace, else the probe's (for a probe kill), else the pod's, else 2 s. */
export function terminationGracePeriod(pod: Pod, container: Container, reason: KillReason): number {
  const deletion = pod.metadata.deletionGracePeriodSeconds;
  if (deletion != null) return deletion;
  const spec = pod.spec.terminationGracePeriodSeconds;
  if (spec == null) return MIN_GRACE_PERIOD_SECONDS;
  const probe = reason === 'StartupProbe' ? container.startupProbe : reason === 'LivenessProbe' ? container.livenessProbe : undefined;
  return probe?.terminationGracePeriodSeconds ?? spec;
}

export interface KillContainerRequest {
  /** The pod; a placeholder without a spec for the container (an orphan) has its spec restored from the container's annotations. */
  pod: Pod;
  id: string;
  name: string;
  /** Event text; default `Stopping container <name>`. */
  message?: string;
  reason?: KillReason;
  /** Replaces the grace period the pod and reason give (the pod worker's effective grace period). */
  gracePeriodOverride?: number;
  ordering?: TerminationOrdering;
  /** For httpGet preStop hooks without a host. */
  podIP: string;
}

/**
 * Upstream restoreSpecsFromContainerLabels: what killing needs (grace periods,
 * the preStop handler) from the container's labels and annotations.
 */
async function restoreSpecs(cri: CriApi, req: KillContainerRequest): Promise<{ pod: Pod; container: Container }> {
  const s = (await cri.containerStatus({ containerId: req.id })).status;
  const a = s?.annotations ?? {};
  const num = (k: string) => (a[k] !== undefined && /^-?\d+$/.test(a[k]) ? Number(a[k]) : undefined);
  const pod: Pod = {
    metadata: { ...req.pod.metadata, deletionGracePeriodSeconds: num(ANNOTATION_DELETION_GRACE) },
    spec: { terminationGracePeriodSeconds: num(ANNOTATION_TERMINATION_GRACE), containers: [] },
  };
  let preStop: NonNullable<Container['lifecycle']>['preStop'];
  try {
    if (a[ANNOTATION_PRESTOP_HANDLER]) preStop = JSON.parse(a[ANNOTATION_PRESTOP_HANDLER]) as typeof preStop;
  } catch {
    preStop = undefined;
  }
  return { pod, container: { name: req.name, ...(preStop ? { lifecycle: { preStop } } : {}) } };
}

function specOf(pod: Pod, name: string): Container | undefined {
  return (pod.spec.containers ?? []).find((c) => c.name === name) ?? (pod.spec.initContainers ?? []).find((c) => c.name === name);
}

/** Upstream killContainer. Returns the events it produced; throws when StopContainer fails (not found is success). */
export async function killContainer(ctx: HookContext, req: KillContainerRequest): Promise<PodEvent[]> {
  let pod = req.pod;
  let container = specOf(pod, req.name);
  if (!container) ({ pod, container } = await restoreSpecs(ctx.cri, req));
  const events: PodEvent[] = [{ type: 'Normal', reason: 'Killing', message: req.message || `Stopping container ${container.name}` }];
  let grace = req.gracePeriodOverride ?? terminationGracePeriod(pod, container, req.reason ?? '');

  const preStop = container.lifecycle?.preStop;
  if (preStop && grace > 0) {
    const start = ctx.clock.now();
    let cancel = () => {};
    const timeout = new Promise<'timeout'>((resolve) => (cancel = ctx.clock.setTimer(grace * 1000, () => resolve('timeout'))));
    const hook = runHandler(ctx, pod, container, req.id, preStop, req.podIP).then((r) => {
      // Upstream records the failure even when the grace period already ran out.
      if (!r.ok) events.push({ type: 'Warning', reason: 'FailedPreStopHook', message: 'PreStopHook failed' });
      return r;
    });
    await Promise.race([hook, timeout]);
    cancel();
    grace -= Math.floor((ctx.clock.now() - start) / 1000);
  }
  if (req.ordering && grace > 0) grace -= await req.ordering.waitForTurn(req.name, grace);
  if (grace < MIN_GRACE_PERIOD_SECONDS) grace = MIN_GRACE_PERIOD_SECONDS;
  await stopContainer(ctx.cri, req.id, grace);
  req.ordering?.containerTerminated(req.name);
  return events;
}

export interface KillPodResult {
  stoppedContainers: number;
  stoppedSandboxes: number;
  events: PodEvent[];
  /** The first failure (every step is still attempted); undefined when all stopped. */
  error?: string;
}

/**
 * Upstream killPodWithSyncResult: stops the pod's running (or possibly
 * running) containers in parallel, in termination order when the pod has
 * sidecars, then stops every sandbox of the pod. Every step is attempted;
 * the first failure, if any, is returned in `error`.
 */
export async function killPod(ctx: HookContext, pod: Pod, status: PodStatus, gracePeriodOverride?: number): Promise<KillPodResult> {
  const running = status.containerStatuses.filter((c) => c.state === 'running' || c.state === 'unknown' || c.state === 'created');
  const ordering = hasRestartableInitContainer(pod)
    ? new TerminationOrdering(
        pod,
        running.map((c) => c.name),
        ctx.clock,
      )
    : undefined;
  const podIP = status.ips[0] ?? '';
  const killed = await Promise.allSettled(
    running.map((c) => killContainer(ctx, { pod, id: c.id, name: c.name, gracePeriodOverride, ordering, podIP })),
  );
  const events = killed.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  const stopped = await Promise.allSettled(
    status.sandboxStatuses.map((s) => ctx.cri.stopPodSandbox({ podSandboxId: s.id }).catch(ignoreNotFound)),
  );
  const failure = [...killed, ...stopped].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const result: KillPodResult = { stoppedContainers: running.length, stoppedSandboxes: status.sandboxStatuses.length, events };
  if (failure) result.error = errorMessage(failure.reason);
  return result;
}

/**
 * Upstream removeContainer: the container's log files first (`<logPath>*`,
 * rotated ones included, and its link in containerLogsDir), then the container, so a failure leaves both for a
 * retry. A container already gone is not an error.
 */
export async function removeContainer(cri: CriApi, id: string, containerLogsDir = ''): Promise<void> {
  let logPath: string;
  let labels: Record<string, string>;
  try {
    const status = (await cri.containerStatus({ containerId: id })).status;
    logPath = status?.logPath ?? '';
    labels = status?.labels ?? {};
  } catch (err) {
    if (err instanceof CriNotFoundError) return;
    throw err;
  }
  const pod = labels['io.kubernetes.pod.name'];
  const container = labels['io.kubernetes.container.name'];
  if (containerLogsDir && pod && container) {
    unlinkContainerLog(legacyLogLinkPath(containerLogsDir, pod, labels['io.kubernetes.pod.namespace'] ?? '', container, id));
  }
  if (logPath) {
    const dir = dirname(logPath);
    const base = basename(logPath);
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((n) => n.startsWith(base));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const n of names) rmSync(join(dir, n), { force: true });
  }
  await cri.removeContainer({ containerId: id }).catch(ignoreNotFound);
}

/** Removes the given (dead) containers and their logs; ones already gone are not an error. */
export async function removeContainers(cri: CriApi, ids: string[], containerLogsDir = ''): Promise<number> {
  await Promise.all(ids.map((id) => removeContainer(cri, id, containerLogsDir)));
  return ids.length;
}

/** Removes every sandbox of the pod (which removes its containers) and any container left over; stops each sandbox first. */
export async function removePod(cri: CriApi, status: PodStatus): Promise<void> {
  await removeContainers(
    cri,
    status.containerStatuses.map((c) => c.id),
  );
  await Promise.all(
    status.sandboxStatuses.map(async (s) => {
      await cri.stopPodSandbox({ podSandboxId: s.id }).catch(ignoreNotFound);
      await cri.removePodSandbox({ podSandboxId: s.id }).catch(ignoreNotFound);
    }),
  );
}
