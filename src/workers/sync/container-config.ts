/**
 * The CRI ContainerConfig for one container of a pod (upstream
 * kuberuntime_container.go generateContainerConfig, kuberuntime_container_linux.go
 * generateLinuxContainerConfig/calculateLinuxResources, labels.go
 * newContainerLabels/newContainerAnnotations, kubelet_pods.go
 * makeEnvironmentVariables, third_party/forked/golang/expansion).
 *
 * Pure: node facts (IPs, node name, memory capacity, allocatable) come in via
 * `opts`; workers have no apiserver, so the Secrets and ConfigMaps that env
 * sources reference (secretKeyRef, configMapKeyRef, envFrom) come resolved in
 * `opts.objects`; without them (no apiserver) such a source throws a
 * KubeletTsError that names the container and variable. Mounts come in via `opts.mounts`
 * (make-mounts.ts); devices are left empty.
 */
import { containerLogPath } from '../../pod/log-paths.js';
import { QUOTA_PERIOD_US, milliCPUToQuota, milliCPUToShares } from '../../pod/cpu-shares.js';
import { envError, expand, fieldRefValue, isEnvVarName, resourceFieldValue } from '../../pod/env-values.js';
import type { Container, Pod } from '../../api/pod.js';
import { milliValue, parseQuantity, value } from '../../api/quantity.js';
import {
  ANNOTATION_CONTAINER_HASH,
  ANNOTATION_RESTART_COUNT,
  ANNOTATION_TERMINATION_GRACE,
  ANNOTATION_TERMINATION_MESSAGE_PATH,
  ANNOTATION_TERMINATION_MESSAGE_POLICY,
  LABEL_CONTAINER_NAME,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  LABEL_POD_UID,
} from '../../runtime/types.js';
import {
  SecurityProfile_ProfileType,
  type ContainerConfig,
  type DeepPartial,
  type LinuxContainerConfig,
  type Mount,
} from '../../gen/runtime/v1/api.js';
import { goJSONString, hashContainer } from '../../pod/container-hash.js';
import { containerOOMScoreAdjust } from '../../pod/qos.js';
import { namespacesForPod, podSupplementalGroups } from './sandbox-config.js';
import type { PodObjects, PodVolume } from '../../pod/sync-types.js';

export const ANNOTATION_DELETION_GRACE = 'io.kubernetes.pod.deletionGracePeriod';
export const ANNOTATION_PRESTOP_HANDLER = 'io.kubernetes.container.preStopHandler';
export const ANNOTATION_CONTAINER_PORTS = 'io.kubernetes.container.ports';
export const ANNOTATION_CONTAINER_TYPE = 'io.kubernetes.container.type';

/** Upstream securitycontext defaultMaskedPaths / defaultReadonlyPaths (procMount Default). */
export const DEFAULT_MASKED_PATHS: readonly string[] = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
export const DEFAULT_READONLY_PATHS: readonly string[] = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

export interface ContainerConfigOptions {
  kind: 'init' | 'regular';
  /** Becomes metadata.attempt, the restartCount annotation and the log file name. */
  restartCount: number;
  /** Primary pod IP ('' when unknown) and all pod IPs, for status.podIP(s) env. */
  podIP: string;
  podIPs: string[];
  nodeName: string;
  hostIP?: string;
  hostIPs?: string[];
  /** The resolved image reference (from PullImage/ImageStatus); falls back to the spec image. */
  imageRef: string;
  /** Node memory capacity in bytes, for the Burstable OOM score. Unset: Burstable containers get 999. */
  memoryCapacityBytes?: bigint | number;
  /** Node allocatable cpu/memory, used by resourceFieldRef on an unset limit (upstream MergeContainerResourceLimits). */
  nodeAllocatable?: { cpu?: string; memory?: string };
  /** --cpu-cfs-quota (default true) and its period in µs (default 100000). */
  cpuCFSQuota?: boolean;
  cpuCFSQuotaPeriodUs?: number;
  /** Directory of Localhost seccomp profiles (default /var/lib/kubelet/seccomp). */
  seccompProfileRoot?: string;
  /** KubeletConfiguration seccompDefault: RuntimeDefault instead of Unconfined when nothing is set. */
  seccompDefault?: boolean;
  /** The container's mounts (make-mounts.ts). */
  mounts?: DeepPartial<Mount>[];
  /** Referenced Secrets and ConfigMaps, resolved on the main thread; unset without an apiserver. */
  objects?: PodObjects;
  /** Service environment variables for the pod (main thread, service-env.ts); unset without an apiserver. */
  serviceEnv?: Record<string, string>;
  /** Groups added after the pod's (extraSupplementalGroups: the PV gid annotations of its volumes). */
  extraSupplementalGroups?: number[];
}

/**
 * Upstream GetExtraSupplementalGroupsForPod: the distinct gid annotations of
 * the pod's set-up volumes (in string order, as upstream's set lists them),
 * without those already in its supplementalGroups or that are not numbers.
 */
export function extraSupplementalGroups(pod: Pod, volumes: Record<string, PodVolume> | undefined): number[] {
  const own = new Set(pod.spec.securityContext?.supplementalGroups ?? []);
  const gids = [...new Set(Object.values(volumes ?? {}).flatMap((v) => (v.gid ? [v.gid] : [])))].sort();
  const out: number[] = [];
  for (const g of gids) {
    // upstream strconv.ParseInt(g, 10, 64): an integer, or the annotation is ignored.
    if (!/^[+-]?\d+$/.test(g)) continue;
    const n = Number(g);
    if (!own.has(n)) out.push(n);
  }
  return out;
}

// --- env -----------------------------------------------------------------------

/**
 * The container's environment in spec order (a repeated name keeps its first
 * position and its last value), then the service variables it does not set.
 * Literal values have `$(VAR)` expanded against the variables defined before
 * them and the service variables.
 */
export function makeEnvironmentVariables(pod: Pod, container: Container, opts: ContainerConfigOptions): { name: string; value: string }[] {
  const ns = pod.metadata.namespace ?? 'default';
  const objects = opts.objects;
  const serviceEnv = opts.serviceEnv;
  const needsApiserver = (what: string) =>
    envError(pod, container, `${what} needs the apiserver; the agent runs without one (--kubeconfig not set)`);
  // null: the object does not exist (upstream returns the apiserver's NotFound error).
  const lookup = (kind: 'secret' | 'configmap', name: string): Record<string, string> | null =>
    (kind === 'secret' ? objects!.secrets[name] : objects!.configMaps[name]) ?? null;
  const notFound = (kind: 'secret' | 'configmap', name: string) =>
    envError(pod, container, `${kind === 'secret' ? 'secrets' : 'configmaps'} ${JSON.stringify(name)} not found`);

  const vars = new Map<string, string>();
  for (const f of container.envFrom ?? []) {
    const ref = f.configMapRef ?? f.secretRef;
    if (!ref) continue;
    const kind = f.configMapRef ? 'configmap' : 'secret';
    if (!objects) throw needsApiserver(`envFrom ${kind} ${ref.name ?? ''}`);
    const data = lookup(kind, ref.name ?? '');
    if (!data) {
      if (ref.optional) continue;
      throw notFound(kind, ref.name ?? '');
    }
    // Keys that are not valid variable names are skipped (the main thread emits InvalidEnvironmentVariableNames).
    for (const [k, v] of Object.entries(data)) if (isEnvVarName((f.prefix ?? '') + k)) vars.set((f.prefix ?? '') + k, v);
  }
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    let v: string;
    if (e.value || !from) v = expand(e.value ?? '', (n) => vars.get(n) ?? serviceEnv?.[n]);
    else if (from.fieldRef) {
      const f = fieldRefValue(pod, from.fieldRef.fieldPath, opts);
      if (f === undefined)
        throw envError(pod, container, `env ${e.name}: unsupported fieldRef fieldPath ${JSON.stringify(from.fieldRef.fieldPath)}`);
      v = f;
    } else if (from.resourceFieldRef) v = resourceFieldValue(pod, container, from.resourceFieldRef, opts);
    else if (from.secretKeyRef || from.configMapKeyRef) {
      const kind = from.secretKeyRef ? 'secret' : 'configmap';
      const ref = (from.secretKeyRef ?? from.configMapKeyRef)!;
      const name = ref.name ?? '';
      if (!objects) throw needsApiserver(`env ${e.name}: ${kind === 'secret' ? 'secretKeyRef' : 'configMapKeyRef'} ${name}/${ref.key}`);
      const data = lookup(kind, name);
      if (!data) {
        if (ref.optional) continue;
        throw notFound(kind, name);
      }
      const found = data[ref.key];
      if (found === undefined) {
        if (ref.optional) continue;
        throw envError(pod, container, `couldn't find key ${ref.key} in ${kind === 'secret' ? 'Secret' : 'ConfigMap'} ${ns}/${name}`);
      }
      v = found;
    } else v = e.value ?? '';
    vars.set(e.name, v);
  }
  // Service variables the container does not define itself come last (upstream), in name order.
  const out = [...vars].map(([name, v]) => ({ name, value: v }));
  if (serviceEnv) for (const name of Object.keys(serviceEnv).sort()) if (!vars.has(name)) out.push({ name, value: serviceEnv[name] });
  return out;
}

// --- labels and annotations ----------------------------------------------------

/** Upstream newContainerLabels. */
export function containerLabels(pod: Pod, container: Container): Record<string, string> {
  const m = pod.metadata;
  return {
    [LABEL_POD_NAME]: m.name ?? '',
    [LABEL_POD_NAMESPACE]: m.namespace ?? '',
    [LABEL_POD_UID]: m.uid ?? '',
    [LABEL_CONTAINER_NAME]: container.name,
  };
}

/** Go-ordered JSON of container ports, as upstream marshals []v1.ContainerPort (omitempty fields dropped). */
function portsJSON(ports: NonNullable<Container['ports']>): string {
  return `[${ports
    .map((p) => {
      const f: string[] = [];
      if (p.name) f.push(`"name":${goJSONString(p.name)}`);
      if (p.hostPort) f.push(`"hostPort":${p.hostPort}`);
      f.push(`"containerPort":${p.containerPort}`);
      if (p.protocol) f.push(`"protocol":${goJSONString(p.protocol)}`);
      if (p.hostIP) f.push(`"hostIP":${goJSONString(p.hostIP)}`);
      return `{${f.join(',')}}`;
    })
    .join(',')}]`;
}

/** Upstream newContainerAnnotations. */
export function containerAnnotations(
  pod: Pod,
  container: Container,
  restartCount: number,
  kind: 'init' | 'regular',
): Record<string, string> {
  const a: Record<string, string> = {
    [ANNOTATION_CONTAINER_HASH]: hashContainer(container),
    [ANNOTATION_RESTART_COUNT]: String(restartCount),
    [ANNOTATION_TERMINATION_MESSAGE_PATH]: container.terminationMessagePath ?? '',
    [ANNOTATION_TERMINATION_MESSAGE_POLICY]: container.terminationMessagePolicy ?? '',
  };
  const del = pod.metadata.deletionGracePeriodSeconds;
  if (del !== undefined && del !== null) a[ANNOTATION_DELETION_GRACE] = String(del);
  const grace = pod.spec.terminationGracePeriodSeconds;
  if (grace !== undefined && grace !== null) a[ANNOTATION_TERMINATION_GRACE] = String(grace);
  if (container.lifecycle?.preStop) a[ANNOTATION_PRESTOP_HANDLER] = JSON.stringify(container.lifecycle.preStop);
  if (container.ports?.length) a[ANNOTATION_CONTAINER_PORTS] = portsJSON(container.ports);
  a[ANNOTATION_CONTAINER_TYPE] = kind === 'init' ? 'init' : 'container';
  return a;
}

// --- linux: resources and security --------------------------------------------

function qty(raw: string | undefined, milli: boolean): number {
  if (raw === undefined) return 0;
  return Number(milli ? milliValue(parseQuantity(raw)) : value(parseQuantity(raw)));
}

/** Upstream generateLinuxContainerConfig (hugepages, swap, memory QoS and user namespaces not modelled). */
export function linuxContainerConfig(pod: Pod, container: Container, opts: ContainerConfigOptions): DeepPartial<LinuxContainerConfig> {
  const req = container.resources?.requests ?? {};
  const lim = container.resources?.limits ?? {};
  const cpuReq = qty(req['cpu'], true);
  const cpuLim = qty(lim['cpu'], true);
  const memLim = qty(lim['memory'], false);
  const period = opts.cpuCFSQuotaPeriodUs ?? QUOTA_PERIOD_US;
  const capacity = BigInt(opts.memoryCapacityBytes ?? 0);
  const resources: DeepPartial<NonNullable<LinuxContainerConfig['resources']>> = {
    // A request defaults to the limit when only the limit is set.
    cpuShares: BigInt(milliCPUToShares(cpuReq === 0 && cpuLim !== 0 ? cpuLim : cpuReq)),
    memoryLimitInBytes: BigInt(memLim),
    oomScoreAdj: BigInt(containerOOMScoreAdjust(pod, container, capacity)),
  };
  if (opts.cpuCFSQuota ?? true) {
    resources.cpuPeriod = BigInt(period);
    resources.cpuQuota = BigInt(milliCPUToQuota(cpuLim, period));
  }

  const podSc = pod.spec.securityContext ?? {};
  const sc = container.securityContext ?? {};
  const runAsUser = sc.runAsUser ?? podSc.runAsUser;
  const runAsGroup = sc.runAsGroup ?? podSc.runAsGroup;
  const seccomp = sc.seccompProfile ?? podSc.seccompProfile;
  const profileType =
    seccomp?.type === 'Localhost'
      ? SecurityProfile_ProfileType.Localhost
      : seccomp?.type === 'RuntimeDefault' || (!seccomp && opts.seccompDefault)
        ? SecurityProfile_ProfileType.RuntimeDefault
        : SecurityProfile_ProfileType.Unconfined;
  const localhostRef =
    seccomp?.type === 'Localhost' ? `${opts.seccompProfileRoot ?? '/var/lib/kubelet/seccomp'}/${seccomp.localhostProfile ?? ''}` : '';
  const unmasked = sc.procMount === 'Unmasked';
  return {
    resources,
    securityContext: {
      privileged: sc.privileged === true,
      readonlyRootfs: sc.readOnlyRootFilesystem === true,
      capabilities: { addCapabilities: [...(sc.capabilities?.add ?? [])], dropCapabilities: [...(sc.capabilities?.drop ?? [])] },
      namespaceOptions: namespacesForPod(pod),
      supplementalGroups: [...podSupplementalGroups(pod), ...(opts.extraSupplementalGroups ?? []).map(BigInt)],
      noNewPrivs: sc.allowPrivilegeEscalation === false,
      maskedPaths: unmasked ? [] : [...DEFAULT_MASKED_PATHS],
      readonlyPaths: unmasked ? [] : [...DEFAULT_READONLY_PATHS],
      seccomp: { profileType, localhostRef },
      ...(runAsUser !== undefined ? { runAsUser: { value: BigInt(runAsUser) } } : {}),
      ...(runAsGroup !== undefined ? { runAsGroup: { value: BigInt(runAsGroup) } } : {}),
    },
  };
}

// --- the config ------------------------------------------------------------------

/**
 * Builds the CreateContainer config. `target` is an index into
 * spec.initContainers (kind 'init') or spec.containers (kind 'regular'), or
 * the container itself.
 */
export function generateContainerConfig(pod: Pod, target: number | Container, opts: ContainerConfigOptions): DeepPartial<ContainerConfig> {
  const container = typeof target === 'number' ? (opts.kind === 'init' ? pod.spec.initContainers : pod.spec.containers)?.[target] : target;
  if (!container)
    throw new RangeError(
      `pod ${pod.metadata.namespace}/${pod.metadata.name}: no ${opts.kind} container at index ${typeof target === 'number' ? target : target.name}`,
    );
  const env = makeEnvironmentVariables(pod, container, opts);
  const all = new Map(env.map((e) => [e.name, e.value]));
  const lookup = (n: string): string | undefined => all.get(n);
  return {
    metadata: { name: container.name, attempt: opts.restartCount },
    image: { image: opts.imageRef || container.image || '', userSpecifiedImage: container.image ?? '' },
    command: (container.command ?? []).map((c) => expand(c, lookup)),
    args: (container.args ?? []).map((a) => expand(a, lookup)),
    workingDir: container.workingDir ?? '',
    envs: env.map((e) => ({ key: e.name, value: Buffer.from(e.value, 'utf8') })),
    mounts: opts.mounts ?? [],
    labels: containerLabels(pod, container),
    annotations: containerAnnotations(pod, container, opts.restartCount, opts.kind),
    logPath: containerLogPath(container.name, opts.restartCount),
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
    linux: linuxContainerConfig(pod, container, opts),
  };
}
