/**
 * Plain-data inputs and results of the sync tasks (they cross threads by
 * structured clone). The pod worker on the main thread passes the backoff
 * state in and stores the one that comes back; workers keep none.
 */
import type { Pod } from '../api/pod.js';
import type { PodStatus } from '../runtime/types.js';
import type { BackoffState } from './backoff.js';

/** Node facts a sync needs. */
export interface NodeInfo {
  name: string;
  /** Primary node IP ('' when unknown). */
  ip: string;
  podLogsDir: string;
  /** Directory of the `<pod>_<ns>_<container>-<id>.log` links ('' = none). */
  containerLogsDir: string;
  clusterDNS: string[];
  clusterDomain: string;
  /** Contents of resolv.conf ('' = upstream --resolv-conf=""). */
  resolvConf: string;
  memoryCapacityBytes: number;
  /** cpuCFSQuota: CPU limits become CFS quotas (default true). */
  cpuCFSQuota?: boolean;
  /** The node's allocatable cpu and memory: a resourceFieldRef to a limit the container does not set reads these. */
  allocatable?: { cpu: string; memory: string };
}

/** A set-up volume of the pod (the volume manager's VolumeMap entry). */
export interface PodVolume {
  /** The host path containers bind. */
  path: string;
  /** The plugin makes every mount of it read-only (configMap, secret, downwardAPI, projected). */
  readOnly: boolean;
  /** A PV's pv.beta.kubernetes.io/gid annotation: an extra supplemental group of the pod's containers. */
  gid?: string;
}

export interface SyncPodInput {
  pod: Pod;
  /** Pod status cache slot of this pod (allocated by the main thread). */
  slot: number;
  /**
   * The cached status is used only when it is newer than this (ms): the end
   * of this pod's previous sync (upstream podCache.GetNewerThan(lastSyncTime)).
   * Otherwise the task reads the runtime directly.
   */
  minTimestamp: number;
  /** The PLEG failed to inspect this pod: ignore the cache and read the runtime. */
  cacheUnreliable?: boolean;
  backoff: BackoffState;
  node: NodeInfo;
  /** Container ids (or names) whose liveness probe failed: they are restarted. */
  livenessFailed?: string[];
  /** Container ids whose startup probe failed: they are restarted. */
  startupFailed?: string[];
  /** Container ids whose startup probe succeeded (a sidecar with a startupProbe is started only then). */
  startupSucceeded?: string[];
  /** The pod's set-up volumes by pod.spec.volumes[].name (absent: the pod has none). */
  volumes?: Record<string, PodVolume>;
  /** The pod's directory under --root-dir: managed /etc/hosts, termination-log files, subPath binds. */
  podDir?: string;
  /** The pod's cgroup (cgroupsPerQOS), made by the main thread before the sync: the sandbox's cgroup_parent. */
  cgroupParent?: string;
  /** Secrets, ConfigMaps and registry credentials the pod references, read on the main thread (cluster mode). */
  objects?: PodObjects;
  /** The pod's service environment variables (cluster mode; src/main/kubelet/service-env.ts). */
  serviceEnv?: Record<string, string>;
}

/** Registry credentials for CRI PullImage (a CRI AuthConfig). */
export interface RegistryAuth {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

/**
 * What a pod's containers take from the apiserver, resolved on the main thread
 * (workers have no apiserver client): the data of referenced Secrets (decoded)
 * and ConfigMaps by name (`null`: the object does not exist), and the
 * credentials of its imagePullSecrets per image as written in the spec.
 */
export interface PodObjects {
  secrets: Record<string, Record<string, string> | null>;
  configMaps: Record<string, Record<string, string> | null>;
  pullAuths: Record<string, RegistryAuth[]>;
}

/** A container's waiting reason from the last sync (upstream reasonCache). */
export interface SyncReason {
  reason: string;
  message: string;
}

export interface PodEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** On the `Pulled` event of a pull that ran: its start and end (ms), for the pod start SLI. */
  pullMs?: [start: number, end: number];
}

export interface SyncPodResult {
  /** describePodActions of the plan that was executed. */
  plan: string;
  /** The plan killed, created or started something (its outcome is for the PLEG to see). */
  acted: boolean;
  /** Waiting reasons by container name; containers absent here have none. */
  reasons: Record<string, SyncReason>;
  backoff: BackoffState;
  events: PodEvent[];
  /** Set when any step failed; the pod worker retries after its error backoff. */
  error?: string;
  /** The error is only containers in CrashLoopBackOff or ImagePullBackOff (upstream's syncPod returns nil then). */
  backoffOnly?: true;
  /**
   * Failures whose detail must stay out of the pod's status and events (host paths of a subPath): the
   * main thread logs each at error level, `message` as the status shows it and `detail` beside it.
   */
  hiddenDetails?: { message: string; detail: string }[];
}

export interface TerminatePodInput {
  pod: Pod;
  /** The pod's cache slot; -1 when it has none (an orphan known only to the runtime). */
  slot: number;
  /** The end of the pod's last sync: the cached status is used only when newer (as SyncPodInput.minTimestamp). */
  minTimestamp: number;
  /** The PLEG could not inspect the pod: read the runtime instead of the cache. */
  cacheUnreliable: boolean;
  gracePeriodSeconds: number;
  /** Also remove the containers and sandboxes (the pod is gone from every source). */
  remove: boolean;
}

export interface TerminatePodResult {
  stoppedContainers: number;
  stoppedSandboxes: number;
  removed: boolean;
  events: PodEvent[];
  /** The runtime status read after everything was stopped (upstream's re-read after KillPod). */
  status: PodStatus;
}
