/**
 * SyncPod in a worker (upstream kubeGenericRuntimeManager.SyncPod): decide
 * with computePodActions, then act in numbered steps:
 *   1. kill the pod (sandbox changed) or 2. the containers that must go;
 *   3. create the sandbox; 4. start the next init container; 5. start the
 *   containers, each after its backoff check and image.
 * Errors of one container do not stop the others; they become the container's
 * waiting reason and the sync's error (the pod worker retries with backoff).
 */
import { mkdirSync } from 'node:fs';
import type { Container, Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { Mounter } from '../../common/mounter.js';
import type { CriClient } from '../../cri/client.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { PodStatus } from '../../runtime/types.js';
import type { PodStatusCache } from '../shared/pod-status-cache.js';
import { doBackOff, type BackoffState } from './backoff.js';
import { computePodActions, describePodActions } from './compute-pod-actions.js';
import { generateContainerConfig, makeEnvironmentVariables, type ContainerConfigOptions } from './container-config.js';
import { ensureImage } from './image-puller.js';
import { killPod, removePod, stopContainer } from './kill-pod.js';
import { makeMounts } from './make-mounts.js';
import { findLatestContainerStatus } from './restart-policy.js';
import { buildPodLogsDirectory, generatePodSandboxConfig, podHostNameAndDomain } from './sandbox-config.js';
import type { NodeInfo, PodEvent, SyncPodInput, SyncPodResult, SyncReason, TerminatePodInput, TerminatePodResult } from './sync-types.js';

export interface SyncContext {
  cri: CriClient;
  runtime: Runtime;
  cache: PodStatusCache;
  clock: Clock;
  /** For subPath bind mounts. */
  mounter: Mounter;
}

/** The pod's runtime status: the cached one when new enough, else read from the runtime. */
/**
 * The pod's runtime status as upstream podCache.GetNewerThan gives it: the
 * cached one when newer than minTimestamp. A pod with no cached status counts
 * as "no containers" once a relist that started after minTimestamp has
 * finished (the cache's global timestamp), because every pod the runtime has
 * is inspected by the relist that first sees it. Otherwise the runtime is read.
 */
export async function currentStatus(
  ctx: SyncContext,
  pod: Pod,
  slot: number,
  minTimestamp: number,
  cacheUnreliable = false,
): Promise<PodStatus> {
  const uid = pod.metadata.uid ?? '';
  const name = pod.metadata.name ?? '';
  const namespace = pod.metadata.namespace ?? '';
  if (!cacheUnreliable && ctx.cache.isNewerThan(slot, minTimestamp)) {
    return (
      ctx.cache.read(slot, uid) ?? {
        uid,
        name,
        namespace,
        ips: [],
        sandboxStatuses: [],
        containerStatuses: [],
        timestamp: ctx.cache.getGlobalTimestamp(),
      }
    );
  }
  return ctx.runtime.getPodStatus(uid, name, namespace);
}

function gracePeriodOf(pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
}

/** The container's mounts; a host-network pod's hosts file lists the node's IPs (upstream podIPs for host network). */
function containerMounts(
  ctx: SyncContext,
  pod: Pod,
  container: Container,
  opts: ContainerConfigOptions,
  sandboxIPs: string[],
  node: NodeInfo,
  volumes: Pick<SyncPodInput, 'volumes' | 'podDir'>,
) {
  if (!volumes.podDir && !container.volumeMounts?.length) return Promise.resolve([]);
  const { hostname, domain } = podHostNameAndDomain(pod, node.clusterDomain);
  return makeMounts(pod, container, {
    podDir: volumes.podDir,
    volumes: volumes.volumes ?? {},
    podIPs: pod.spec.hostNetwork ? (node.ip ? [node.ip] : []) : sandboxIPs,
    hostname,
    domain,
    env: container.volumeMounts?.some((m) => m['subPathExpr']) ? makeEnvironmentVariables(pod, container, opts) : [],
    mounter: ctx.mounter,
  });
}

interface StartOutcome {
  reason?: SyncReason;
  backoff: BackoffState;
}

async function startContainer(
  ctx: SyncContext,
  pod: Pod,
  container: Container,
  kind: 'init' | 'regular',
  status: PodStatus,
  sandbox: { id: string; config: ReturnType<typeof generatePodSandboxConfig>; ips: string[] },
  node: NodeInfo,
  backoff: BackoffState,
  events: PodEvent[],
  volumes: Pick<SyncPodInput, 'volumes' | 'podDir'>,
): Promise<StartOutcome> {
  const now = ctx.clock.now();
  const back = doBackOff(backoff, pod, container, status, now);
  if (back.inBackoff) {
    events.push({ type: 'Warning', reason: 'BackOff', message: back.eventMessage });
    return { reason: { reason: back.reason, message: back.message }, backoff: back.state };
  }
  backoff = back.state;
  const image = await ensureImage(ctx.cri, pod, container, backoff, now);
  events.push(...image.events);
  backoff = image.backoff;
  if (!image.ok) return { reason: image.reason, backoff };
  // upstream: the latest instance's restartCount annotation + 1 (survives garbage collection of old instances).
  const latest = findLatestContainerStatus(status, container.name);
  const restartCount = latest ? latest.restartCount + 1 : 0;
  let config: ReturnType<typeof generateContainerConfig>;
  try {
    const opts: ContainerConfigOptions = {
      kind,
      restartCount,
      podIP: sandbox.ips[0] ?? '',
      podIPs: sandbox.ips,
      nodeName: node.name,
      hostIP: node.ip,
      hostIPs: node.ip ? [node.ip] : [],
      imageRef: image.imageRef,
      memoryCapacityBytes: node.memoryCapacityBytes,
    };
    opts.mounts = await containerMounts(ctx, pod, container, opts, sandbox.ips, node, volumes);
    config = generateContainerConfig(pod, container, opts);
  } catch (err) {
    // upstream: errors generating the config (env, mounts) are CreateContainerConfigError.
    const message = err instanceof Error ? err.message : String(err);
    events.push({ type: 'Warning', reason: 'Failed', message: `Error: ${message}` });
    return { reason: { reason: 'CreateContainerConfigError', message }, backoff };
  }
  let containerId: string;
  try {
    containerId = (await ctx.cri.createContainer({ podSandboxId: sandbox.id, config, sandboxConfig: sandbox.config })).containerId;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    events.push({ type: 'Warning', reason: 'Failed', message: `Error: ${message}` });
    return { reason: { reason: 'CreateContainerError', message }, backoff };
  }
  events.push({ type: 'Normal', reason: 'Created', message: `Created container ${container.name}` });
  try {
    await ctx.cri.startContainer({ containerId });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    events.push({ type: 'Warning', reason: 'Failed', message: `Error: ${message}` });
    return { reason: { reason: 'RunContainerError', message }, backoff };
  }
  events.push({ type: 'Normal', reason: 'Started', message: `Started container ${container.name}` });
  return { backoff };
}

export async function syncPod(ctx: SyncContext, input: SyncPodInput): Promise<SyncPodResult> {
  const { pod, node } = input;
  let backoff = input.backoff;
  const events: PodEvent[] = [];
  const reasons: Record<string, SyncReason> = {};
  const errors: string[] = [];
  const status = await currentStatus(ctx, pod, input.slot, input.minTimestamp, input.cacheUnreliable);
  const actions = computePodActions(pod, status, { livenessFailed: input.livenessFailed });
  const plan = describePodActions(actions);

  // Steps 1–2: kill what must not run.
  if (actions.killPod) {
    const killed = await killPod(ctx.cri, status, gracePeriodOf(pod));
    events.push(...killed.events);
  } else {
    await Promise.all(
      actions.containersToKill.map(async (k) => {
        events.push({ type: 'Normal', reason: 'Killing', message: k.message || `Stopping container ${k.name}` });
        await stopContainer(ctx.cri, k.id, gracePeriodOf(pod));
      }),
    );
  }

  // Step 3: the sandbox.
  let sandboxId = actions.sandboxId;
  const sandboxConfig = generatePodSandboxConfig(pod, actions.attempt, {
    podLogsDir: node.podLogsDir,
    clusterDNS: node.clusterDNS,
    clusterDomain: node.clusterDomain,
    resolvConf: node.resolvConf,
  });
  let ips = status.sandboxStatuses.find((s) => s.id === sandboxId)?.ips ?? status.ips;
  if (actions.createSandbox) {
    try {
      mkdirSync(buildPodLogsDirectory(node.podLogsDir, pod), { recursive: true, mode: 0o755 });
      sandboxId = (await ctx.cri.runPodSandbox({ config: sandboxConfig })).podSandboxId;
      const sb = await ctx.cri.podSandboxStatus({ podSandboxId: sandboxId });
      ips = [sb.status?.network?.ip, ...(sb.status?.network?.additionalIps ?? []).map((i) => i.ip)].filter((x): x is string => !!x);
    } catch (err) {
      const message = `Failed to create pod sandbox: ${err instanceof Error ? err.message : String(err)}`;
      events.push({ type: 'Warning', reason: 'FailedCreatePodSandBox', message });
      return { plan, reasons, backoff, events, error: message };
    }
  }
  if (!sandboxId) return { plan, reasons, backoff, events };
  const sandbox = { id: sandboxId, config: sandboxConfig, ips };

  // Step 4: the next init container (one at a time).
  for (const i of actions.initContainersToStart) {
    const c = pod.spec.initContainers![i];
    const out = await startContainer(ctx, pod, c, 'init', status, sandbox, node, backoff, events, input);
    backoff = out.backoff;
    if (out.reason) {
      reasons[c.name] = out.reason;
      errors.push(`failed to "StartContainer" for "${c.name}" with ${out.reason.reason}: "${out.reason.message}"`);
      return { plan, reasons, backoff, events, error: errors.join('; ') };
    }
  }

  // Step 5: the containers, in spec order as upstream starts them; one failure does not stop the others.
  for (const i of actions.containersToStart) {
    const c = (pod.spec.containers ?? [])[i];
    const out = await startContainer(ctx, pod, c, 'regular', status, sandbox, node, backoff, events, input);
    backoff = out.backoff;
    if (out.reason) {
      reasons[c.name] = out.reason;
      errors.push(`failed to "StartContainer" for "${c.name}" with ${out.reason.reason}: "${out.reason.message}"`);
    }
  }
  return { plan, reasons, backoff, events, ...(errors.length ? { error: errors.join('; ') } : {}) };
}

/** syncTerminatingPod (+ removal when the pod is gone from every source). */
export async function terminatePod(ctx: SyncContext, input: TerminatePodInput): Promise<TerminatePodResult> {
  const status = await ctx.runtime.getPodStatus(
    input.pod.metadata.uid ?? '',
    input.pod.metadata.name ?? '',
    input.pod.metadata.namespace ?? '',
  );
  const killed = await killPod(ctx.cri, status, input.gracePeriodSeconds);
  if (input.remove) {
    const after = await ctx.runtime.getPodStatus(status.uid, status.name, status.namespace);
    await removePod(ctx.cri, after);
  }
  return {
    stoppedContainers: killed.stoppedContainers,
    stoppedSandboxes: killed.stoppedSandboxes,
    removed: input.remove,
    events: killed.events,
  };
}
