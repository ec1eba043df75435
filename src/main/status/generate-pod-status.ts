/**
 * The v1 PodStatus the kubelet reports for a pod (upstream
 * kubelet_pods.go generateAPIPodStatus, convertStatusToAPIStatus,
 * convertToAPIContainerStatuses, getPhase; the probe manager's
 * UpdatePodStatus; the status manager's startTime and lastTransitionTime
 * rules). Pure: every input is an argument, time comes from `opts.now`.
 *
 * Inputs: the desired pod, the runtime's view of it (the RUNTIME PodStatus,
 * undefined when the runtime knows nothing yet) and the last status the
 * kubelet generated (`previous`, upstream oldPodStatus; falls back to
 * pod.status). Output timestamps are RFC3339 with seconds precision, UTC.
 */
import type {
  Container,
  ContainerStateV1,
  ContainerStatusV1,
  Pod,
  PodCondition,
  PodPhase,
  PodStatus as ApiPodStatus,
} from '../../api/pod.js';
import type { ContainerStatus as RuntimeContainerStatus, PodStatus as RuntimePodStatus } from '../../runtime/types.js';
import { rfc3339 } from '../../common/time.js';
import { getPodQOS } from '../../pod/qos.js';
import { CONFIG_SOURCE_ANNOTATION } from '../podconfig/types.js';
import {
  KUBELET_OWNED_CONDITIONS,
  POD_SCHEDULED,
  generatePodInitializedCondition,
  generatePodReadyCondition,
  generateContainersReadyCondition,
  generatePodReadyToStartContainersCondition,
  isRestartableInitContainer,
  setTransitionTimes,
} from './pod-conditions.js';

export const REASON_CONTAINER_CREATING = 'ContainerCreating';
export const REASON_POD_INITIALIZING = 'PodInitializing';
export const REASON_STATUS_UNKNOWN = 'ContainerStatusUnknown';

export interface ContainerReason {
  reason: string;
  message?: string;
}

export interface GenerateStatusOptions {
  /** ms since the epoch. */
  now: number;
  /** Node IPs, primary first (hostIP/hostIPs; podIPs of host-network pods). */
  nodeIPs?: string[];
  nodeIP?: string;
  /** The last status generated for this pod (upstream oldPodStatus). */
  previous?: ApiPodStatus;
  /** Why a container failed to start in the last sync (ErrImagePull, CrashLoopBackOff, ...), by name. */
  reasonCache?: Map<string, ContainerReason>;
  /** The pod worker decided the pod is terminal: its containers will not be restarted. */
  podIsTerminal?: boolean;
  /** Readiness probe results by container name; a container without a result is ready iff it has no readinessProbe. */
  readiness?: Map<string, boolean>;
  /** Startup probe results by container name; without a result, started iff it has no startupProbe. */
  startup?: Map<string, boolean>;
  /** Prefix of containerID (`<runtime>://<id>`). Default 'containerd'. */
  runtimeName?: string;
  /**
   * An internal module asked for the pod to be evicted (upstream
   * PodSyncHandlers ShouldEvict, e.g. activeDeadlineSeconds): the phase
   * becomes Failed with this reason and message, before conditions are set.
   */
  evict?: { reason: string; message: string };
}

export { rfc3339 };

const nsToRfc3339 = (ns: bigint): string | null => (ns > 0n ? rfc3339(Number(ns / 1_000_000n)) : null);
const isTerminal = (phase: string | undefined): phase is 'Failed' | 'Succeeded' => phase === 'Failed' || phase === 'Succeeded';

export function generateAPIPodStatus(pod: Pod, runtime: RuntimePodStatus | undefined, opts: GenerateStatusOptions): ApiPodStatus {
  const old: ApiPodStatus = opts.previous ?? pod.status ?? {};
  const now = rfc3339(opts.now);
  const s: ApiPodStatus = {};

  const podIPs = runtime?.ips ?? [];
  if (podIPs.length > 0) {
    s.podIP = podIPs[0];
    s.podIPs = podIPs.map((ip) => ({ ip }));
  }
  s.qosClass = getPodQOS(pod);
  const runtimeName = opts.runtimeName ?? 'containerd';
  const hasInit = (pod.spec.initContainers ?? []).length > 0;
  s.containerStatuses = convertContainerStatuses(
    pod,
    runtime,
    old.containerStatuses ?? [],
    pod.spec.containers ?? [],
    hasInit,
    false,
    opts,
    runtimeName,
  );
  s.initContainerStatuses = convertContainerStatuses(
    pod,
    runtime,
    old.initContainerStatuses ?? [],
    pod.spec.initContainers ?? [],
    hasInit,
    true,
    opts,
    runtimeName,
  );
  applyProbeResults(pod, s, opts);

  const all = [...s.containerStatuses, ...s.initContainerStatuses];
  let phase = getPhase(pod, all, opts.podIsTerminal === true, hasAnyActiveRegularContainerStarted(pod, runtime));
  if (!isTerminal(phase)) {
    if (isTerminal(old.phase)) phase = old.phase!;
    else if (isTerminal(pod.status?.phase)) phase = pod.status.phase!;
  }
  if (isTerminal(pod.status?.phase) && phase !== pod.status.phase) phase = pod.status.phase!;
  s.phase = phase;
  if (phase === old.phase) {
    const reason = old.reason || pod.status?.reason;
    const message = old.message || pod.status?.message;
    if (reason) s.reason = reason;
    if (message) s.message = message;
  }
  if (opts.evict) {
    phase = 'Failed';
    s.phase = phase;
    s.reason = opts.evict.reason;
    s.message = opts.evict.message;
  }

  const conditions: PodCondition[] = (pod.status?.conditions ?? []).filter((c) => !KUBELET_OWNED_CONDITIONS.includes(c.type));
  conditions.push(generatePodReadyToStartContainersCondition(pod, runtime));
  const forConditions = [...s.initContainerStatuses, ...s.containerStatuses];
  conditions.push(generatePodInitializedCondition(pod, forConditions, phase));
  conditions.push(generatePodReadyCondition(pod, conditions, forConditions, phase));
  conditions.push(generateContainersReadyCondition(pod, forConditions, phase));
  conditions.push({ type: POD_SCHEDULED, status: 'True' });
  setTransitionTimes(conditions, old, now);
  s.conditions = conditions;

  const hostIPs = opts.nodeIPs ?? (opts.nodeIP ? [opts.nodeIP] : []);
  if (hostIPs.length > 0) {
    s.hostIP = hostIPs[0];
    s['hostIPs'] = hostIPs.map((ip) => ({ ip }));
    if (pod.spec.hostNetwork && !s.podIP) {
      s.podIP = hostIPs[0];
      s.podIPs = hostIPs.map((ip) => ({ ip }));
    }
  }
  s.startTime = old.startTime ?? now;
  return s;
}

/** Upstream getPhase: the phase from the API container statuses (init and regular) and the restart policy. */
export function getPhase(pod: Pod, statuses: ContainerStatusV1[], podIsTerminal: boolean, podHasInitialized: boolean): PodPhase {
  const spec = pod.spec;
  const find = (name: string) => statuses.find((cs) => cs.name === name);
  let pendingRegularInit = 0;
  let pendingRestartableInit = 0;
  let failedInit = 0;
  let unknown = 0,
    running = 0,
    waiting = 0,
    stopped = 0,
    succeeded = 0;

  for (const c of spec.initContainers ?? []) {
    const cs = find(c.name);
    const st = cs?.state;
    if (isRestartableInitContainer(c)) {
      if (!cs) unknown++;
      else if (st?.running) {
        if (cs.started !== true) pendingRestartableInit++;
        running++;
      } else if (st?.terminated) {
        // A stopped sidecar does not count.
      } else if (st?.waiting) {
        if (!cs.lastState?.terminated) {
          pendingRestartableInit++;
          waiting++;
        }
      } else {
        pendingRestartableInit++;
        unknown++;
      }
      continue;
    }
    if (!cs || st?.running) pendingRegularInit++;
    else if (st?.terminated) {
      if (st.terminated.exitCode !== 0) failedInit++;
    } else if (st?.waiting) {
      const last = cs.lastState?.terminated;
      if (last) {
        if (last.exitCode !== 0) failedInit++;
      } else pendingRegularInit++;
    } else pendingRegularInit++;
  }

  for (const c of spec.containers ?? []) {
    const cs = find(c.name);
    const st = cs?.state;
    if (!cs) unknown++;
    else if (st?.running) running++;
    else if (st?.terminated) {
      stopped++;
      if (st.terminated.exitCode === 0) succeeded++;
    } else if (st?.waiting) {
      if (cs.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }

  const restartPolicy = spec.restartPolicy ?? 'Always';
  if (failedInit > 0 && restartPolicy === 'Never') return 'Failed';
  if (pendingRegularInit > 0 || (pendingRestartableInit > 0 && !podHasInitialized) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal && !isStatic(pod)) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function isStatic(pod: Pod): boolean {
  const source = pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION];
  return source !== undefined && source !== 'api';
}

/** A regular container exists in the newest sandbox (upstream HasAnyActiveRegularContainerStarted). */
function hasAnyActiveRegularContainerStarted(pod: Pod, runtime: RuntimePodStatus | undefined): boolean {
  if (!runtime) return false;
  const names = new Set((pod.spec.containers ?? []).map((c) => c.name));
  const sandbox = runtime.sandboxStatuses[0]?.id;
  return runtime.containerStatuses.some((c) => names.has(c.name) && (sandbox === undefined || c.sandboxId === sandbox));
}

/** Newest first (runtime statuses by creation time). */
function newestFirst(runtime: RuntimePodStatus | undefined): RuntimeContainerStatus[] {
  return [...(runtime?.containerStatuses ?? [])].sort((a, b) => (a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0));
}

/** Upstream ShouldContainerBeRestarted against the newest runtime status of the container. */
function shouldContainerBeRestarted(c: Container, pod: Pod, latest: RuntimeContainerStatus | undefined): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  if (!latest) return true;
  if (latest.state === 'running') return false;
  if (latest.state === 'unknown' || latest.state === 'created') return true;
  const policy = c.restartPolicy ?? pod.spec.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure') return latest.exitCode !== 0;
  return true;
}

function convertOne(cs: RuntimeContainerStatus, old: ContainerStatusV1 | undefined, runtimeName: string): ContainerStatusV1 {
  const containerID = `${runtimeName}://${cs.id}`;
  const out: ContainerStatusV1 = {
    name: cs.name,
    ready: false,
    restartCount: cs.restartCount,
    image: cs.image,
    imageID: cs.imageRef,
    containerID,
    state: {},
  };
  if (cs.state === 'running') {
    out.state = { running: { startedAt: nsToRfc3339(cs.startedAt) } };
  } else if (cs.state === 'created') {
    out.state = { waiting: {} };
  } else if (cs.state === 'exited') {
    const terminated: NonNullable<ContainerStateV1['terminated']> = {
      exitCode: cs.exitCode,
      reason: cs.reason || (cs.exitCode === 0 ? 'Completed' : 'Error'),
      startedAt: nsToRfc3339(cs.startedAt),
      finishedAt: nsToRfc3339(cs.finishedAt),
      containerID,
    };
    if (cs.message) terminated.message = cs.message;
    out.state = { terminated };
  } else if (old?.state?.running) {
    out.state = {
      terminated: {
        exitCode: 137,
        reason: REASON_STATUS_UNKNOWN,
        message: 'The container could not be located when the pod was terminated',
      },
    };
    out.restartCount = old.restartCount + 1;
  } else {
    out.state = { waiting: {} };
  }
  return out;
}

function convertContainerStatuses(
  pod: Pod,
  runtime: RuntimePodStatus | undefined,
  previous: ContainerStatusV1[],
  containers: Container[],
  hasInit: boolean,
  isInit: boolean,
  opts: GenerateStatusOptions,
  runtimeName: string,
): ContainerStatusV1[] {
  const olds = new Map(previous.map((p) => [p.name, p]));
  const defaultReason = hasInit ? REASON_POD_INITIALIZING : REASON_CONTAINER_CREATING;
  const statuses = new Map<string, ContainerStatusV1>();
  for (const c of containers) {
    let st: ContainerStatusV1 = {
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: { waiting: { reason: defaultReason } },
    };
    const old = olds.get(c.name);
    if (old?.state?.terminated) st = structuredClone(old);
    else if (old) {
      st.restartCount = old.restartCount;
      if (old.lastState) st.lastState = structuredClone(old.lastState);
    }
    statuses.set(c.name, st);
  }

  const sorted = newestFirst(runtime);
  // A container that was running and vanished from the runtime ran and stopped: record that, so the pod does not fall back to Pending.
  for (const c of containers) {
    if (sorted.some((r) => r.name === c.name && r.state === 'created')) continue;
    const old = olds.get(c.name);
    if (!old || old.state?.terminated || !old.state?.running) continue;
    const st = statuses.get(c.name)!;
    if (st.state?.waiting?.reason !== defaultReason || st.lastState?.terminated) continue;
    st.lastState = {
      terminated: {
        exitCode: 137,
        reason: REASON_STATUS_UNKNOWN,
        message: 'The container could not be located when the pod was deleted.  The container used to be Running',
      },
    };
    if (!pod.metadata.deletionTimestamp) st.restartCount += 1;
  }

  const seen = new Map<string, number>();
  for (const r of sorted) {
    if (!statuses.has(r.name)) continue;
    const n = seen.get(r.name) ?? 0;
    if (n >= 2) continue;
    const converted = convertOne(r, olds.get(r.name), runtimeName);
    if (n === 0) statuses.set(r.name, converted);
    else statuses.get(r.name)!.lastState = converted.state!;
    seen.set(r.name, n + 1);
  }

  for (const c of containers) {
    const latest = sorted.find((r) => r.name === c.name);
    if (isInit && latest?.state === 'exited' && latest.exitCode === 0) continue;
    if (!shouldContainerBeRestarted(c, pod, latest)) continue;
    const cached = opts.reasonCache?.get(c.name);
    if (!cached) continue;
    const st = statuses.get(c.name)!;
    if (st.state?.terminated) st.lastState = st.state;
    st.state = { waiting: cached.message !== undefined ? { reason: cached.reason, message: cached.message } : { reason: cached.reason } };
  }

  const out = containers.map((c) => statuses.get(c.name)!);
  return isInit ? out : out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Upstream prober manager UpdatePodStatus: `started` and `ready` for every container status. */
function applyProbeResults(pod: Pod, s: ApiPodStatus, opts: GenerateStatusOptions): void {
  const byName = new Map([...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].map((c) => [c.name, c]));
  const probe = (cs: ContainerStatusV1, c: Container | undefined) => {
    const runningNow = cs.state?.running !== undefined;
    cs.started = runningNow && (opts.startup?.get(cs.name) ?? !c?.startupProbe);
    cs.ready = cs.started && (opts.readiness?.get(cs.name) ?? !c?.readinessProbe);
  };
  for (const cs of s.containerStatuses ?? []) probe(cs, byName.get(cs.name));
  for (const cs of s.initContainerStatuses ?? []) {
    const c = byName.get(cs.name);
    if (c && isRestartableInitContainer(c)) probe(cs, c);
    else {
      cs.started = cs.state?.running !== undefined && (opts.startup?.get(cs.name) ?? !c?.startupProbe);
      cs.ready = cs.state?.terminated !== undefined && cs.state.terminated.exitCode === 0;
    }
  }
}
