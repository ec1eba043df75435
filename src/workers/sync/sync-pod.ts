/**
 * SyncPod in a worker (upstream kubeGenericRuntimeManager.SyncPod): decide
 * with computePodActions, then act in numbered steps:
 *   1. kill the pod (sandbox changed or pod done), then purge its init
 *      containers when a new sandbox follows, or 2. kill the containers that
 *      must go; prune old init container instances;
 *   3. create the sandbox; 4. start init containers and sidecars; 5. start
 *      the containers, each after its backoff check, image and postStart hook.
 * Errors of one container do not stop the others; they become the container's
 * waiting reason and the sync's error (the pod worker retries with backoff).
 */
import type { Container, Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { SubpathError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { makeDirectory } from '../../common/make-dir.js';
import type { Mounter } from '../../common/mounter.js';
import { criStatusMessage, type CriApi } from '../../cri/client.js';
import type { Runtime } from '../../runtime/runtime.js';
import { toSandboxStatus } from '../../runtime/convert.js';
import { hasRuntimeState, type KnownPodIds, type PodStatus } from '../../runtime/types.js';
import type { ImagePullGate } from '../../shared/image-pull-gate.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';
import { doBackOff, type BackoffState } from '../../pod/backoff.js';
import { computePodActions, describePodActions } from './compute-pod-actions.js';
import {
  extraSupplementalGroups,
  generateContainerConfig,
  makeEnvironmentVariables,
  type ContainerConfigOptions,
} from './container-config.js';
import { ensureImage } from './image-puller.js';
import type { PresentImages } from './present-images.js';
import { initContainersToPrune, initContainersToPurge, isRestartableInitContainer } from '../../pod/init-containers.js';
import { killContainer, killPod, removeContainers, removePod } from './kill-pod.js';
import { runHandler, type HookContext } from './lifecycle-hooks.js';
import { containerLogsDirectory, restartCountFromLogDir } from './log-restart-count.js';
import { join } from 'node:path';
import { legacyLogLinkPath, linkContainerLog } from '../logs/legacy-log-link.js';
import { makeMounts } from './make-mounts.js';
import { findLatestContainerStatus } from '../../pod/restart-policy.js';
import { publishCreatedSandbox, publishStartedContainers, type StartedContainer } from './publish-status.js';
import { buildPodLogsDirectory } from '../../pod/log-paths.js';
import { generatePodSandboxConfig, podHostNameAndDomain } from './sandbox-config.js';
import type {
  NodeInfo,
  PodEvent,
  SyncPodInput,
  SyncPodResult,
  SyncReason,
  TerminatePodInput,
  TerminatePodResult,
} from '../../pod/sync-types.js';

export interface SyncContext extends HookContext {
  cri: CriApi;
  runtime: Runtime;
  cache: PodStatusCache;
  clock: Clock;
  /** For subPath bind mounts. */
  mounter: Mounter;
  /** Node-wide image pull limits; absent: none. */
  pullGate?: ImagePullGate;
  /** This thread's images found present moments ago; absent: ImageStatus before every start. */
  presentImages?: PresentImages;
}

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
  /** Created and started (and its post-start hook passed). */
  started?: StartedContainer;
  /** A failure whose detail only the agent's log may show (SyncPodResult.hiddenDetails). */
  hidden?: { message: string; detail: string };
}

/**
 * The restart count of a new instance: the newest instance's + 1, else 0 (upstream v1.20.2). Only for a pod
 * of which the runtime shows no sandbox (it lost the pod; this sync makes a new sandbox) does it continue from
 * the log directory (newer upstream's calcRestartCountByLogDir). With a sandbox listed, a container missing from
 * the status may be a live one a truncated list left out: a fresh attempt number would start a second instance
 * beside it, where 0 (or the listed instance's + 1) is refused by the runtime's name reservation while the
 * instance holding that name exists (found by the fault suite, runtime-slow-steady-sim).
 */
function nextRestartCount(pod: Pod, container: Container, status: PodStatus, node: NodeInfo): number {
  const latest = findLatestContainerStatus(status, container.name);
  if (latest) return latest.restartCount + 1;
  if (status.sandboxStatuses.length > 0) return 0;
  return restartCountFromLogDir(containerLogsDirectory(buildPodLogsDirectory(node.podLogsDir, pod), container.name));
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
  volumes: Pick<SyncPodInput, 'volumes' | 'podDir' | 'objects' | 'serviceEnv'>,
): Promise<StartOutcome> {
  const now = ctx.clock.now();
  const back = doBackOff(backoff, pod, container, status, now);
  if (back.inBackoff) {
    events.push({ type: 'Warning', reason: 'BackOff', message: back.eventMessage });
    return { reason: { reason: back.reason, message: back.message }, backoff: back.state };
  }
  backoff = back.state;
  const image = await ensureImage(ctx.cri, pod, container, backoff, now, {
    gate: ctx.pullGate,
    clock: ctx.clock,
    auths: volumes.objects?.pullAuths[container.image ?? ''],
    presentImages: ctx.presentImages,
  });
  events.push(...image.events);
  backoff = image.backoff;
  if (!image.ok) return { reason: image.reason, backoff };
  const failed = (reason: string, err: unknown): StartOutcome => {
    const message = criStatusMessage(err);
    events.push({ type: 'Warning', reason: 'Failed', message: `Error: ${message}` });
    return { reason: { reason, message }, backoff };
  };
  const restartCount = nextRestartCount(pod, container, status, node);
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
      ...(node.cpuCFSQuota !== undefined && { cpuCFSQuota: node.cpuCFSQuota }),
      nodeAllocatable: node.allocatable,
      objects: volumes.objects,
      serviceEnv: volumes.serviceEnv,
      extraSupplementalGroups: extraSupplementalGroups(pod, volumes.volumes),
    };
    opts.mounts = await containerMounts(ctx, pod, container, opts, sandbox.ips, node, volumes);
    config = generateContainerConfig(pod, container, opts);
  } catch (err) {
    // upstream: errors generating the config (env, mounts) are CreateContainerConfigError.
    const out = failed('CreateContainerConfigError', err);
    return err instanceof SubpathError ? { ...out, hidden: { message: err.message, detail: err.detail } } : out;
  }
  let containerId: string;
  try {
    containerId = (await ctx.cri.createContainer({ podSandboxId: sandbox.id, config, sandboxConfig: sandbox.config })).containerId;
  } catch (err) {
    // The image may be gone since it was found present: the retry asks the runtime again.
    ctx.presentImages?.forgetAll();
    return failed('CreateContainerError', err);
  }
  events.push({ type: 'Normal', reason: 'Created', message: `Created container: ${container.name}` });
  try {
    await ctx.cri.startContainer({ containerId });
  } catch (err) {
    return failed('RunContainerError', err);
  }
  events.push({ type: 'Normal', reason: 'Started', message: `Started container ${container.name}` });
  if (node.containerLogsDir && sandbox.config.logDirectory && config.logPath) {
    // Upstream links the log for log shippers; a failure is logged upstream and changes nothing else.
    try {
      const link = legacyLogLinkPath(
        node.containerLogsDir,
        pod.metadata.name ?? '',
        pod.metadata.namespace ?? '',
        container.name,
        containerId,
      );
      linkContainerLog(link, join(sandbox.config.logDirectory, config.logPath), node.containerLogsDir);
    } catch (err) {
      events.push({ type: 'Warning', reason: 'Failed', message: `Failed to create the container log link: ${errorMessage(err)}` });
    }
  }

  const postStart = container.lifecycle?.postStart;
  if (postStart) {
    const hook = await runHandler(ctx, pod, container, containerId, postStart, sandbox.ips[0] ?? '');
    if (!hook.ok) {
      // The hook's output stays out of the event (it may hold secrets), as upstream.
      events.push({ type: 'Warning', reason: 'FailedPostStartHook', message: 'PostStartHook failed' });
      try {
        events.push(
          ...(await killContainer(ctx, {
            pod,
            id: containerId,
            name: container.name,
            message: 'FailedPostStartHook',
            podIP: sandbox.ips[0] ?? '',
          })),
        );
      } catch (err) {
        events.push({
          type: 'Warning',
          reason: 'FailedKillPod',
          message: `error killing container ${container.name}: ${criStatusMessage(err)}`,
        });
      }
      return { reason: { reason: 'PostStartHookError', message: hook.message }, backoff };
    }
  }
  return { backoff, started: { id: containerId, sandboxId: sandbox.id } };
}

/** Removes dead containers; failures are reported as events and retried by a later sync or container GC. */
async function removeQuietly(ctx: SyncContext, ids: string[], events: PodEvent[], containerLogsDir: string): Promise<void> {
  if (ids.length === 0) return;
  try {
    await removeContainers(ctx.cri, ids, containerLogsDir);
  } catch (err) {
    events.push({
      type: 'Warning',
      reason: 'FailedRemoveContainer',
      message: `failed to remove init containers: ${criStatusMessage(err)}`,
    });
  }
}

/** Start failures that are a backoff still running (kubecontainer.ErrCrashLoopBackOff, images.ErrImagePullBackOff). */
const BACKOFF_REASONS = new Set(['CrashLoopBackOff', 'ImagePullBackOff']);

export async function syncPod(ctx: SyncContext, input: SyncPodInput): Promise<SyncPodResult> {
  const { pod, node } = input;
  let backoff = input.backoff;
  const events: PodEvent[] = [];
  const reasons: Record<string, SyncReason> = {};
  const errors: string[] = [];
  const hidden: NonNullable<SyncPodResult['hiddenDetails']> = [];
  const status = await currentStatus(ctx, pod, input.slot, input.minTimestamp, input.cacheUnreliable);
  const actions = computePodActions(pod, status, {
    livenessFailed: input.livenessFailed,
    startupFailed: input.startupFailed,
    startupSucceeded: input.startupSucceeded,
  });
  const plan = describePodActions(actions);
  const acted =
    actions.killPod ||
    actions.createSandbox ||
    actions.containersToKill.length > 0 ||
    actions.initContainersToStart.length > 0 ||
    actions.containersToStart.length > 0;

  // What this sync creates and starts is published in the pod's cache entry on top of the status it started from,
  // unless it stops something that status shows up (the entry would still show it running).
  const stale = (actions.killPod && stillUp(status)) || actions.containersToKill.length > 0;

  // Steps 1–2: kill what must not run.
  if (actions.killPod) {
    const killed = await killPod(ctx, pod, status);
    events.push(...killed.events);
    if (killed.error) return { plan, acted, reasons, backoff, events, error: `failed to "KillPodSandbox": ${killed.error}` };
    // A new sandbox starts initialization over: no init container of the old one may count.
    if (actions.createSandbox) await removeQuietly(ctx, initContainersToPurge(pod, status), events, node.containerLogsDir);
  } else {
    for (const k of actions.containersToKill) {
      try {
        events.push(
          ...(await killContainer(ctx, { pod, id: k.id, name: k.name, message: k.message, reason: k.reason, podIP: status.ips[0] ?? '' })),
        );
      } catch (err) {
        return { plan, acted, reasons, backoff, events, error: `failed to "KillContainer" for "${k.name}": ${criStatusMessage(err)}` };
      }
    }
  }
  // Only the newest exited instance of each init container is kept.
  await removeQuietly(ctx, initContainersToPrune(pod, status), events, node.containerLogsDir);

  // Step 3: the sandbox.
  let sandboxId = actions.sandboxId;
  const sandboxConfig = generatePodSandboxConfig(pod, actions.attempt, {
    podLogsDir: node.podLogsDir,
    clusterDNS: node.clusterDNS,
    clusterDomain: node.clusterDomain,
    resolvConf: node.resolvConf,
    ...(input.cgroupParent !== undefined && { cgroupParent: input.cgroupParent }),
  });
  let ips = status.sandboxStatuses.find((s) => s.id === sandboxId)?.ips ?? status.ips;
  let published: PodStatus | undefined;
  if (actions.createSandbox) {
    try {
      makeDirectory(buildPodLogsDirectory(node.podLogsDir, pod), 'the pod log directory', 0o755);
      sandboxId = (await ctx.cri.runPodSandbox({ config: sandboxConfig })).podSandboxId;
      const sb = await ctx.cri.podSandboxStatus({ podSandboxId: sandboxId });
      ips = [sb.status?.network?.ip, ...(sb.status?.network?.additionalIps ?? []).map((i) => i.ip)].filter((x): x is string => !!x);
      if (sb.status && !stale) published = publishCreatedSandbox(ctx, input.slot, status, toSandboxStatus(sb.status));
    } catch (err) {
      const message = `Failed to create pod sandbox: ${errorMessage(err)}`;
      events.push({ type: 'Warning', reason: 'FailedCreatePodSandBox', message });
      return { plan, acted, reasons, backoff, events, error: message };
    }
  }
  if (!sandboxId) return { plan, acted, reasons, backoff, events };
  const sandbox = { id: sandboxId, config: sandboxConfig, ips };
  const started: StartedContainer[] = [];
  /** Starts one container; false if it failed (its reason and error are recorded). */
  const start = async (c: Container, kind: 'init' | 'regular'): Promise<boolean> => {
    const out = await startContainer(ctx, pod, c, kind, status, sandbox, node, backoff, events, input);
    backoff = out.backoff;
    if (out.started) started.push(out.started);
    if (out.hidden) hidden.push(out.hidden);
    if (!out.reason) return true;
    reasons[c.name] = out.reason;
    errors.push(`failed to "StartContainer" for "${c.name}" with ${out.reason.reason}: "${out.reason.message}"`);
    return false;
  };

  // Step 4: init containers and sidecars, in spec order. A sidecar that fails to start does not stop the
  // others; an ordinary init container that fails ends this sync (step 5 is skipped).
  let initFailed = false;
  for (const i of actions.initContainersToStart) {
    const c = pod.spec.initContainers![i];
    if (!(await start(c, 'init')) && !isRestartableInitContainer(c)) {
      initFailed = true;
      break;
    }
  }
  // Step 5: the containers, in spec order as upstream starts them; one failure does not stop the others.
  if (!initFailed) for (const i of actions.containersToStart) await start((pod.spec.containers ?? [])[i], 'regular');
  if (!stale) await publishStartedContainers(ctx, input.slot, published ?? status, started);
  // upstream syncPod: "Do not return error if the only failures were pods in backoff".
  const backoffOnly = errors.length > 0 && Object.values(reasons).every((r) => BACKOFF_REASONS.has(r.reason));
  return {
    plan,
    acted,
    reasons,
    backoff,
    events,
    ...(errors.length ? { error: errors.join('; ') } : {}),
    ...(backoffOnly ? { backoffOnly: true as const } : {}),
    ...(hidden.length ? { hiddenDetails: hidden } : {}),
  };
}

/** The sandbox and container ids of a status, to read them again without a filtered list of the runtime. */
function idsOf(status: PodStatus): KnownPodIds {
  return {
    sandboxes: status.sandboxStatuses.map((s) => ({ id: s.id })),
    containers: status.containerStatuses.map((c) => ({ id: c.id, sandboxId: c.sandboxId })),
  };
}

/** A running container or a ready sandbox: what a finished kill leaves none of. */
function stillUp(status: PodStatus): boolean {
  return status.containerStatuses.some((c) => c.state === 'running') || status.sandboxStatuses.some((s) => s.state === 'ready');
}

/**
 * syncTerminatingPod (+ removal when the pod is gone from every source): stop
 * everything the pod's status lists (upstream: the pod worker's cached status,
 * newer than the last sync; here the cache when it is that fresh, else the
 * runtime), then read the runtime again so the final status reflects the
 * stop (upstream re-reads after KillPod): the ids it stopped, or the pod's
 * filtered lists when its status was empty; and return that status. If that
 * read still shows a running container or a ready sandbox, they are stopped
 * too and the runtime read once more; a container running after that is an
 * error (retried by the pod worker).
 */
export async function terminatePod(ctx: SyncContext, input: TerminatePodInput): Promise<TerminatePodResult> {
  const { uid = '', name = '', namespace = '' } = input.pod.metadata;
  const status =
    input.slot >= 0
      ? await currentStatus(ctx, input.pod, input.slot, input.minTimestamp, input.cacheUnreliable)
      : await ctx.runtime.getPodStatus(uid, name, namespace);
  const kill = async (from: PodStatus) => {
    const r = await killPod(ctx, input.pod, from, input.gracePeriodSeconds);
    if (r.error) throw new Error(`failed to "KillPodSandbox" for ${namespace}/${name}: ${r.error}`);
    return r;
  };
  const killed = await kill(status);
  // What the kill worked from is the pod's current status (the cache is trusted only when observed after the
  // pod's last sync), so its ids are read again without listing the runtime; an empty status is checked by a
  // list (nothing was stopped, so the lists are the only check that nothing runs).
  let after = await ctx.runtime.getPodStatus(uid, name, namespace, hasRuntimeState(status) ? idsOf(status) : undefined);
  if (stillUp(after)) {
    // Something the kill worked from is still up, or the lists found what an empty status did not have: stop
    // what the runtime lists now; anything still running after that fails the termination, which the pod
    // worker retries (upstream SyncTerminatingPod's check after KillPod).
    const again = await kill(after);
    killed.stoppedContainers += again.stoppedContainers;
    killed.stoppedSandboxes += again.stoppedSandboxes;
    killed.events.push(...again.events);
    after = await ctx.runtime.getPodStatus(uid, name, namespace);
    const running = after.containerStatuses.filter((c) => c.state === 'running').map((c) => c.name);
    if (running.length > 0) {
      throw new Error(`detected running containers after a successful KillPod, CRI violation: ${running.join(', ')}`);
    }
  }
  if (input.remove) {
    await removePod(ctx.cri, after);
    after = await ctx.runtime.getPodStatus(uid, name, namespace);
  }
  return {
    stoppedContainers: killed.stoppedContainers,
    stoppedSandboxes: killed.stoppedSandboxes,
    removed: input.remove,
    events: killed.events,
    status: after,
  };
}
