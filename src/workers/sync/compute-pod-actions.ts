/**
 * The "decide" half of SyncPod (upstream kuberuntime_manager.go
 * computePodActions + util.PodSandboxChanged; init containers and sidecars
 * in init-containers.ts).
 *
 * Contract:
 *  - Pure: the result depends only on (pod, runtime status, opts). No clock,
 *    no I/O, no state kept between calls. Safe to run in any worker thread.
 *  - The result is plain data (arrays, strings, numbers, booleans) so it can
 *    cross threads by structured clone and be logged via describePodActions.
 *  - The caller acts on it in upstream's order: kill pod (or the listed
 *    containers) → create sandbox → start init containers → start containers,
 *    applying crash-loop backoff (backoff.ts) before each start.
 *
 * Init containers follow upstream's sidecar-aware path (computeInitContainerActions):
 * one at a time, in spec order, the next only after the previous exited 0
 * (or, for a sidecar, started); sidecars are kept running and restarted
 * whatever the pod's restartPolicy, and do not keep a finished pod alive.
 * Regular containers start once initialization is done. See the end of the
 * file for what is not modelled.
 */
import type { Pod } from '../../api/pod.js';
import type { PodStatus } from '../../runtime/types.js';
import { hashChanged, hashContainer } from '../../pod/container-hash.js';
import { computeInitContainerActions, hasAnyRegularContainerCreated, type InitProbeResults } from '../../pod/init-containers.js';
import {
  containerSucceeded,
  findLatestContainerStatus,
  podRestartPolicy,
  shouldPodContainerBeRestarted,
  shouldRestartOnFailure,
} from '../../pod/restart-policy.js';

/** Why a container is killed (upstream containerKillReason; '' when the message says it all). */
export type KillReason = 'LivenessProbe' | 'StartupProbe' | 'Unknown' | '';

export interface ContainerToKill {
  /** Runtime container id. */
  id: string;
  /** Container name (spec name). */
  name: string;
  reason: KillReason;
  /** Human-readable, upstream wording, e.g. "Container web definition changed, will be restarted". */
  message: string;
}

export interface PodActions {
  /** Stop every container and the sandbox(es) of the pod before anything else. */
  killPod: boolean;
  /** Create a new sandbox (after killPod); init containers restart from index 0. */
  createSandbox: boolean;
  /** The sandbox to start containers in; '' when there is none or it is being replaced by a network change. */
  sandboxId: string;
  /** Attempt number for the sandbox to create (or of the existing one). */
  attempt: number;
  /** Indices into spec.initContainers to start, in spec order: the next init container and any sidecar to (re)start. */
  initContainersToStart: number[];
  /** Indices into spec.containers to start, in spec order. */
  containersToStart: number[];
  /** Containers to stop when killPod is false. */
  containersToKill: ContainerToKill[];
}

export interface ComputePodActionsOptions {
  /** Accepted for call-site symmetry; the decision itself does not depend on time. */
  now?: number;
  /**
   * Containers whose liveness probe reported failure, by runtime container id
   * or by container name. Ids are preferred: a result for an old instance then
   * cannot kill its replacement.
   */
  livenessFailed?: ReadonlySet<string> | readonly string[];
  /** Containers whose startup probe reported failure (same keying as livenessFailed). */
  startupFailed?: ReadonlySet<string> | readonly string[];
  /**
   * Containers whose startup probe succeeded (same keying). A sidecar with a
   * startupProbe counts as started only once it is listed here.
   */
  startupSucceeded?: ReadonlySet<string> | readonly string[];
}

export interface SandboxChange {
  changed: boolean;
  attempt: number;
  sandboxId: string;
}

/**
 * Upstream PodSandboxChanged: whether the pod needs a new sandbox, the attempt
 * number for it, and the sandbox id to keep using or to kill.
 *  - no sandbox → create, attempt 0
 *  - more than one ready sandbox, or the newest is not ready → recreate, attempt + 1
 *  - host-network mode differs from the spec → recreate, attempt + 1, id ''
 *  - a pod-network sandbox without an IP → recreate, attempt + 1
 */
export function podSandboxChanged(pod: Pod, status: PodStatus): SandboxChange {
  const sandboxes = status.sandboxStatuses;
  if (sandboxes.length === 0) return { changed: true, attempt: 0, sandboxId: '' };
  const newest = sandboxes[0];
  const ready = sandboxes.filter((s) => s.state === 'ready').length;
  if (ready > 1 || newest.state !== 'ready') return { changed: true, attempt: newest.attempt + 1, sandboxId: newest.id };
  const hostNetwork = pod.spec.hostNetwork === true;
  if (newest.hostNetwork !== hostNetwork) return { changed: true, attempt: newest.attempt + 1, sandboxId: '' };
  if (!hostNetwork && newest.ips.length === 0) return { changed: true, attempt: newest.attempt + 1, sandboxId: newest.id };
  return { changed: false, attempt: newest.attempt, sandboxId: newest.id };
}

function toMatcher(v: ReadonlySet<string> | readonly string[] | undefined): (id: string, name: string) => boolean {
  if (!v) return () => false;
  const set: ReadonlySet<string> = v instanceof Set ? v : new Set(v as readonly string[]);
  return (id, name) => set.has(id) || set.has(name);
}

/** Computes what SyncPod must do to bring the runtime state of `pod` to its spec. */
export function computePodActions(pod: Pod, status: PodStatus, opts: ComputePodActionsOptions = {}): PodActions {
  const sandbox = podSandboxChanged(pod, status);
  const actions: PodActions = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxId: sandbox.sandboxId,
    attempt: sandbox.attempt,
    initContainersToStart: [],
    containersToStart: [],
    containersToKill: [],
  };
  const containers = pod.spec.containers ?? [];
  const inits = pod.spec.initContainers ?? [];

  if (sandbox.changed) {
    // A dead sandbox of a finished run-once pod is not recreated: just kill it.
    // With no container status at all, nothing ever ran, so creation is retried.
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && status.containerStatuses.length !== 0) {
      actions.createSandbox = false;
      return actions;
    }
    const toStart: number[] = [];
    containers.forEach((c, i) => {
      if (podRestartPolicy(pod) === 'OnFailure' && containerSucceeded(c, status)) return;
      toStart.push(i);
    });
    // Initialization is done (a regular container was created) and nothing is left to run.
    if (toStart.length === 0 && hasAnyRegularContainerCreated(pod, status)) {
      actions.createSandbox = false;
      return actions;
    }
    // A new sandbox restarts initialization from the first init container.
    if (inits.length > 0) {
      actions.initContainersToStart = [0];
      return actions;
    }
    actions.containersToStart = toStart;
    return actions;
  }

  const liveness = toMatcher(opts.livenessFailed);
  const startup = toMatcher(opts.startupFailed);
  const started = toMatcher(opts.startupSucceeded);
  const probes: InitProbeResults = { startupSucceeded: started, startupFailed: startup, livenessFailed: liveness };
  const init = computeInitContainerActions(pod, status, probes);
  actions.initContainersToStart = init.toStart;
  actions.containersToKill.push(...init.toKill);
  if (init.killPod) {
    actions.killPod = true;
    actions.initContainersToStart = [];
    return actions;
  }
  // Initialization failed or is in progress: regular containers wait.
  if (!init.initialized) return actions;

  let keepCount = 0;
  containers.forEach((container, idx) => {
    const s = findLatestContainerStatus(status, container.name);
    if (!s || s.state !== 'running') {
      if (shouldPodContainerBeRestarted(pod, container, status)) {
        actions.containersToStart.push(idx);
        // Unknown may still be running: kill first so two instances never coexist.
        if (s && s.state === 'unknown') {
          actions.containersToKill.push({
            id: s.id,
            name: s.name,
            reason: 'Unknown',
            message: `Container is in "${s.state}" state, try killing it before restart`,
          });
        }
      }
      return;
    }
    let message: string;
    let reason: KillReason = '';
    let restart = shouldRestartOnFailure(pod);
    if (hashChanged(hashContainer(container), s.hash)) {
      message = `Container ${container.name} definition changed`;
      restart = true; // a spec change restarts regardless of the restart policy
    } else if (liveness(s.id, container.name)) {
      message = `Container ${container.name} failed liveness probe`;
      reason = 'LivenessProbe';
    } else if (startup(s.id, container.name)) {
      message = `Container ${container.name} failed startup probe`;
      reason = 'StartupProbe';
    } else {
      keepCount++;
      return;
    }
    if (restart) {
      message += ', will be restarted';
      actions.containersToStart.push(idx);
    }
    actions.containersToKill.push({ id: s.id, name: s.name, reason, message });
  });

  // Nothing left running and nothing to start: the pod is done; stop the sandbox.
  // Sidecars must not keep a finished pod alive, so none is restarted.
  if (keepCount === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    actions.initContainersToStart = [];
  }
  return actions;
}

/** One line for logs, e.g. `killPod=false createSandbox=true attempt=1 sandbox=- init=[0] start=[] kill=[]`. */
export function describePodActions(a: PodActions): string {
  const kills = a.containersToKill.map((k) => `${k.name}(${k.id.slice(0, 12)}${k.reason ? `,${k.reason}` : ''})`);
  return (
    `killPod=${a.killPod} createSandbox=${a.createSandbox} attempt=${a.attempt} sandbox=${a.sandboxId ? a.sandboxId.slice(0, 12) : '-'} ` +
    `init=[${a.initContainersToStart.join(',')}] start=[${a.containersToStart.join(',')}] kill=[${kills.join(',')}]`
  );
}

/*
 * Not modelled (upstream features this kubelet does not implement):
 *  - ephemeral containers (EphemeralContainersToStart);
 *  - in-place resize (ContainersToUpdate, UpdatePodResources);
 *  - per-container restart rules (ContainerRestartRules);
 *  - the internal PostStopContainer lifecycle hook (CPU manager).
 */
