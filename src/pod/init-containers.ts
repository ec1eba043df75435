/**
 * Init containers and sidecars (restartable init containers,
 * `initContainers[].restartPolicy: Always`), as upstream
 * kuberuntime_container.go computeInitContainerActions,
 * hasAnyRegularContainerCreated, purgeInitContainers and
 * pruneInitContainersBeforeStart decide them (the SidecarContainers path,
 * which upstream uses for every pod since LegacySidecarContainers went away;
 * sidecars are v1.28 and later. v1.20's computeInitContainerActions runs
 * init containers strictly in order with no restartable kind).
 *
 * Contract: pure functions of (pod, runtime status, probe results); they
 * return indices and container ids and never call the runtime. The runtime
 * status is matched by name, newest instance first.
 */
import type { Container, Pod } from '../api/pod.js';
import type { ContainerStatus, PodStatus } from '../runtime/types.js';
import { hashChanged, hashContainer } from './container-hash.js';
import { findContainerStatuses, findLatestContainerStatus, isInitContainerFailed, shouldRestartOnFailure } from './restart-policy.js';

/** A container to stop before (re)starting; same shape as compute-pod-actions' ContainerToKill. */
export interface InitContainerToKill {
  id: string;
  name: string;
  reason: 'LivenessProbe' | 'StartupProbe' | 'Unknown' | '';
  message: string;
}

/** Probe results the init-container decision needs, by runtime container id or container name. */
export interface InitProbeResults {
  /** Startup probe succeeded. A sidecar with a startupProbe and no result yet is waited for. */
  startupSucceeded(id: string, name: string): boolean;
  startupFailed(id: string, name: string): boolean;
  livenessFailed(id: string, name: string): boolean;
}

export interface InitContainerActions {
  /** Every regular container may start (upstream podHasInitialized). */
  initialized: boolean;
  /** A non-restartable init container failed and the pod never restarts: kill the pod. */
  killPod: boolean;
  /** Indices into spec.initContainers to start, in spec order. */
  toStart: number[];
  toKill: InitContainerToKill[];
}

/** Upstream podutil.IsRestartableInitContainer. */
export function isRestartableInitContainer(c: Pick<Container, 'restartPolicy'>): boolean {
  return c.restartPolicy === 'Always';
}

/** The pod has at least one sidecar (upstream types.HasRestartableInitContainer). */
export function hasRestartableInitContainer(pod: Pod): boolean {
  return (pod.spec.initContainers ?? []).some(isRestartableInitContainer);
}

/** Upstream hasAnyRegularContainerCreated: a regular container exists in created, running or exited state. */
export function hasAnyRegularContainerCreated(pod: Pod, status: PodStatus): boolean {
  return (pod.spec.containers ?? []).some((c) => {
    const s = findLatestContainerStatus(status, c.name);
    return s !== undefined && (s.state === 'created' || s.state === 'running' || s.state === 'exited');
  });
}

const NO_PROBES: InitProbeResults = { startupSucceeded: () => false, startupFailed: () => false, livenessFailed: () => false };

/**
 * Upstream computeInitContainerActions. Walks the init containers from the
 * last to the first (completed ones may have been garbage collected, so the
 * newest evidence wins):
 *  - not yet initialized: start the first init container never run, or the
 *    one after the last that completed (regular) or started (sidecar; a
 *    startupProbe must have succeeded first);
 *  - a failed regular init container is restarted, or kills the pod when the
 *    pod never restarts;
 *  - a sidecar that exited is restarted whatever the pod's restartPolicy;
 *  - a running sidecar whose spec changed, or that failed its startup or
 *    liveness probe, is killed and started again;
 *  - once a regular container was created or runs, only sidecars are kept up.
 */
export function computeInitContainerActions(pod: Pod, status: PodStatus, probes: InitProbeResults = NO_PROBES): InitContainerActions {
  const inits = pod.spec.initContainers ?? [];
  const out: InitContainerActions = { initialized: true, killPod: false, toStart: [], toKill: [] };
  if (inits.length === 0) return out;

  let initialized = (pod.spec.containers ?? []).some((c) => {
    const s = findLatestContainerStatus(status, c.name);
    // An exited regular container may belong to a previous sandbox (e.g. after a node reboot): it proves nothing.
    return s !== undefined && (s.state === 'created' || s.state === 'running');
  });
  let previouslyInitialized = initialized;
  const restartOnFailure = shouldRestartOnFailure(pod);
  const kill = (s: ContainerStatus, c: Container, reason: InitContainerToKill['reason'], message: string) =>
    out.toKill.push({ id: s.id, name: c.name, reason, message });

  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i];
    const sidecar = isRestartableInitContainer(c);
    const s = findLatestContainerStatus(status, c.name);
    if (!s) {
      // Initialized before, but this sidecar's instance is gone: bring it back.
      if (previouslyInitialized && sidecar) out.toStart.push(i);
      continue;
    }
    if (previouslyInitialized && !sidecar) continue;

    switch (s.state) {
      case 'created':
        // Created and started in one step normally; stuck in created means the start failed.
        out.toStart.push(i);
        break;
      case 'running': {
        if (!sidecar) break; // wait for it to finish
        if (c.startupProbe && !probes.startupSucceeded(s.id, c.name)) {
          if (probes.startupFailed(s.id, c.name)) {
            kill(s, c, 'StartupProbe', `Init container ${c.name} failed startup probe`);
            out.toStart.push(i);
          }
          break; // not started yet: later init containers wait
        }
        if (i === inits.length - 1) initialized = true;
        else if (!previouslyInitialized) out.toStart.push(i + 1);
        if (hashChanged(hashContainer(c), s.hash)) {
          kill(s, c, '', `Init container ${c.name} definition changed`);
          out.toStart.push(i);
          break;
        }
        if (c.livenessProbe && probes.livenessFailed(s.id, c.name)) {
          kill(s, c, 'LivenessProbe', `Init container ${c.name} failed liveness probe`);
          out.toStart.push(i);
        }
        break;
      }
      case 'exited':
        if (sidecar) {
          out.toStart.push(i);
        } else if (isInitContainerFailed(s)) {
          if (!restartOnFailure) return { initialized: false, killPod: true, toStart: [], toKill: out.toKill };
          out.toStart.push(i);
        } else if (i === inits.length - 1) {
          initialized = true;
        } else {
          out.toStart.push(i + 1);
        }
        break;
      default: {
        // unknown: it may still run; kill it before starting it again.
        if (!sidecar && !restartOnFailure) return { initialized: false, killPod: true, toStart: [], toKill: out.toKill };
        kill(s, c, 'Unknown', `Init container is in "${s.state}" state, try killing it before restart`);
        out.toStart.push(i);
      }
    }
    previouslyInitialized = true;
  }
  if (!previouslyInitialized) out.toStart.push(0);
  out.toStart.reverse();
  out.initialized = initialized;
  return out;
}

/**
 * Upstream purgeInitContainers: after the pod was killed for a new sandbox,
 * every instance of every init container goes, so initialization starts over
 * in the new sandbox and no exited instance of the old one counts.
 */
export function initContainersToPurge(pod: Pod, status: PodStatus): string[] {
  const names = new Set((pod.spec.initContainers ?? []).map((c) => c.name));
  return status.containerStatuses.filter((c) => names.has(c.name)).map((c) => c.id);
}

/**
 * Upstream pruneInitContainersBeforeStart: of the exited (or unknown)
 * instances of each init container, only the newest is kept.
 */
export function initContainersToPrune(pod: Pod, status: PodStatus): string[] {
  const out: string[] = [];
  for (const name of new Set((pod.spec.initContainers ?? []).map((c) => c.name))) {
    const dead = findContainerStatuses(status, name).filter((c) => c.state === 'exited' || c.state === 'unknown');
    out.push(...dead.slice(1).map((c) => c.id));
  }
  return out;
}
