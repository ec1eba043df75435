/**
 * The `kubelet.config.k8s.io/v1beta1` KubeletConfiguration subset kubelet-ts
 * supports, its upstream defaults (pkg/kubelet/apis/config/v1beta1/defaults.go)
 * and the resolved, flag-merged `KubeletConfig` the rest of the agent reads.
 *
 * Contract:
 * - The file schema is strict: an unknown field is an error, never ignored.
 * - Field names are the upstream JSON (camelCase) names; resolved durations are
 *   milliseconds (`number`), parsed from Go duration strings ("1m0s").
 * - As upstream, a zero/empty value in the file means "use the default" for
 *   the fields upstream defaults that way (durations, port, maxPods, ...).
 * - Ranges and cross-field rules are checked once, on the resolved config
 *   (after flags), by load-config.ts, which also names the source of a bad value.
 */
import * as z from 'zod';
import { isValidQuantity } from '../../api/quantity.js';
import { durationString } from './duration-schema.js';
import { ServerConfigFileFields, applyServerFile, type ServerConfig } from './server-config.js';
import { TAINT_EFFECTS, type TaintSpec } from './taints.js';
import { collectOtherFields, otherFieldsShape, otherTopLevelKeys } from './settings-catalog.js';

export const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const KUBELET_CONFIG_KIND = 'KubeletConfiguration';

/** Upstream `ports.KubeletReadOnlyPort`: the read-only port when no --config file is given. */
export const LEGACY_READ_ONLY_PORT = 10255;

/** Upstream eviction.DefaultEvictionHard (Linux). A file's evictionHard replaces it unless mergeDefaultEvictionSettings. */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = Object.freeze({
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
});

export const EVICTION_SIGNALS = [
  'memory.available',
  'allocatableMemory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
] as const;
export const RESERVABLE_RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pid'] as const;
export const ENFORCE_NODE_ALLOCATABLE = [
  'none',
  'pods',
  'system-reserved',
  'kube-reserved',
  'system-reserved-compressible',
  'kube-reserved-compressible',
] as const;
export const CGROUP_DRIVERS = ['cgroupfs', 'systemd'] as const;
export const HAIRPIN_MODES = ['promiscuous-bridge', 'hairpin-veth', 'none'] as const;
export const LOGGING_FORMATS = ['text', 'json'] as const;
export const RELIST_MODES = ['parallel', 'serial'] as const;
export const PLEG_MODES = ['generic', 'evented'] as const;

export type { TaintSpec } from './taints.js';
export type LoggingFormat = (typeof LOGGING_FORMATS)[number];
export type RelistMode = (typeof RELIST_MODES)[number];
export type PlegMode = (typeof PLEG_MODES)[number];
export type CgroupDriver = (typeof CGROUP_DRIVERS)[number];
export type HairpinMode = (typeof HAIRPIN_MODES)[number];

// ---------------------------------------------------------------------------
// File schema

const quantityString = z
  .string()
  .refine(isValidQuantity, { error: (iss) => `invalid quantity ${JSON.stringify(iss.input)} (expected e.g. "100Mi", "500m", "1Gi")` });

const quantityOrPercent = z.string().refine((v) => (v.endsWith('%') ? /^[0-9]+(\.[0-9]+)?%$/.test(v) : isValidQuantity(v)), {
  error: (iss) => `invalid threshold ${JSON.stringify(iss.input)} (expected a quantity such as "100Mi" or a percentage such as "10%")`,
});

const evictionSignal = z.string().refine((k) => (EVICTION_SIGNALS as readonly string[]).includes(k), {
  error: (iss) => `unknown eviction signal ${JSON.stringify(iss.input)} (known: ${EVICTION_SIGNALS.join(', ')})`,
});
const reservableResource = z.string().refine((k) => (RESERVABLE_RESOURCES as readonly string[]).includes(k), {
  error: (iss) => `unsupported resource ${JSON.stringify(iss.input)} (supported: ${RESERVABLE_RESOURCES.join(', ')})`,
});

/** signal → threshold maps (evictionHard, evictionSoft, evictionMinimumReclaim). */
export const EvictionThresholdsSchema = z.record(evictionSignal, quantityOrPercent);
/** resource → quantity maps (systemReserved, kubeReserved). */
export const ReservedResourcesSchema = z.record(reservableResource, quantityString);
export const QuantitySchema = quantityString;

const int = z.int();
const bool = z.boolean();
const str = z.string();

/**
 * The file as written. Every field but apiVersion/kind is optional; output
 * durations are milliseconds. `z.output<>` of this is `KubeletConfigurationFile`.
 */
export const KubeletConfigurationFileSchema = z.strictObject({
  apiVersion: z.literal(KUBELET_CONFIG_API_VERSION, { error: `apiVersion must be "${KUBELET_CONFIG_API_VERSION}"` }),
  kind: z.literal(KUBELET_CONFIG_KIND, { error: `kind must be "${KUBELET_CONFIG_KIND}"` }),

  enableServer: bool.optional(),
  staticPodPath: str.optional(),
  staticPodURL: str.optional(),
  staticPodURLHeader: z.record(str, z.array(str)).optional(),
  syncFrequency: durationString.optional(),
  fileCheckFrequency: durationString.optional(),
  httpCheckFrequency: durationString.optional(),
  podHousekeepingPeriod: durationString.optional(),

  address: str.optional(),
  port: int.optional(),
  readOnlyPort: int.optional(),
  healthzPort: int.optional(),
  healthzBindAddress: str.optional(),

  maxPods: int.optional(),
  podsPerCore: int.optional(),
  podPidsLimit: int.optional(),
  podCIDR: str.optional(),
  providerID: str.optional(),

  runtimeRequestTimeout: durationString.optional(),
  containerRuntimeEndpoint: str.optional(),
  imageServiceEndpoint: str.optional(),
  podLogsDir: str.optional(),

  registerNode: bool.optional(),
  registerWithTaints: z
    .array(
      z.strictObject({
        key: z.string().min(1),
        value: str.optional(),
        effect: z.enum(TAINT_EFFECTS),
      }),
    )
    .optional(),
  nodeStatusUpdateFrequency: durationString.optional(),
  nodeStatusReportFrequency: durationString.optional(),
  nodeStatusMaxImages: int.optional(),
  nodeLeaseDurationSeconds: int.optional(),

  imageMinimumGCAge: durationString.optional(),
  imageMaximumGCAge: durationString.optional(),
  imageGCHighThresholdPercent: int.optional(),
  imageGCLowThresholdPercent: int.optional(),
  serializeImagePulls: bool.optional(),
  maxParallelImagePulls: int.optional(),
  registryPullQPS: int.optional(),
  registryBurst: int.optional(),

  evictionHard: EvictionThresholdsSchema.optional(),
  evictionSoft: EvictionThresholdsSchema.optional(),
  evictionSoftGracePeriod: z.record(evictionSignal, durationString).optional(),
  evictionMinimumReclaim: EvictionThresholdsSchema.optional(),
  evictionPressureTransitionPeriod: durationString.optional(),
  evictionMaxPodGracePeriod: int.optional(),
  mergeDefaultEvictionSettings: bool.optional(),

  systemReserved: ReservedResourcesSchema.optional(),
  kubeReserved: ReservedResourcesSchema.optional(),
  enforceNodeAllocatable: z.array(str).optional(),

  cgroupDriver: z.enum(CGROUP_DRIVERS).optional(),
  cgroupRoot: str.optional(),
  cgroupsPerQOS: bool.optional(),
  failSwapOn: bool.optional(),
  localStorageCapacityIsolation: bool.optional(),
  oomScoreAdj: int.optional(),

  clusterDNS: z.array(str).optional(),
  clusterDomain: str.optional(),
  resolvConf: str.optional(),
  hairpinMode: z.enum(HAIRPIN_MODES).optional(),

  kubeAPIQPS: int.optional(),
  kubeAPIBurst: int.optional(),
  eventRecordQPS: int.optional(),
  eventBurst: int.optional(),

  containerLogMaxSize: quantityString.optional(),
  containerLogMaxFiles: int.optional(),
  containerLogMaxWorkers: int.optional(),
  containerLogMonitorInterval: durationString.optional(),

  shutdownGracePeriod: durationString.optional(),
  shutdownGracePeriodCriticalPods: durationString.optional(),

  featureGates: z.record(str, bool).optional(),
  enableDebuggingHandlers: bool.optional(),
  enableSystemLogHandler: bool.optional(),
  enableProfilingHandler: bool.optional(),
  enableDebugFlagsHandler: bool.optional(),
  ...ServerConfigFileFields,
  logging: z
    .strictObject({
      format: z.enum(LOGGING_FORMATS).optional(),
      verbosity: int.optional(),
      ...otherFieldsShape('logging'),
    })
    .optional(),
  // The upstream fields kubelet-ts does not model (settings-catalog.ts): typed, then explained or refused.
  ...otherFieldsShape('', ['logging']),
});

export type KubeletConfigurationFile = z.output<typeof KubeletConfigurationFileSchema>;

// ---------------------------------------------------------------------------
// Resolved config

/**
 * The resolved configuration: defaults, then the --config file, then flags
 * that were explicitly set. Durations are milliseconds. Read-only after
 * resolveConfig returns it.
 */
export interface KubeletConfig extends ServerConfig {
  // --- KubeletConfiguration (file or flag); the server's fields are in ServerConfig ---
  enableServer: boolean;
  /** Directory or single file of static pods; '' = no file source. */
  staticPodPath: string;
  /** URL of static pods; '' = no HTTP source. */
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  syncFrequency: number;
  fileCheckFrequency: number;
  httpCheckFrequency: number;
  podHousekeepingPeriod: number;
  address: string;
  port: number;
  /** 0 = disabled. See load-config.ts for the upstream with/without --config rule. */
  readOnlyPort: number;
  /** 0 = disabled. */
  healthzPort: number;
  healthzBindAddress: string;
  maxPods: number;
  podsPerCore: number;
  /** -1 = node allocatable pid limit. */
  podPidsLimit: number;
  podCIDR: string;
  providerID: string;
  runtimeRequestTimeout: number;
  /** e.g. 'unix:///run/containerd/containerd.sock', or 'sim' for the embedded simulated runtime. */
  containerRuntimeEndpoint: string;
  /** Always set: defaults to containerRuntimeEndpoint when not configured (upstream's '' means the same). */
  imageServiceEndpoint: string;
  podLogsDir: string;
  registerNode: boolean;
  /** Taints the node is registered with (`--register-with-taints`). */
  registerWithTaints: TaintSpec[];
  nodeStatusUpdateFrequency: number;
  nodeStatusReportFrequency: number;
  nodeStatusMaxImages: number;
  nodeLeaseDurationSeconds: number;
  imageMinimumGCAge: number;
  /** 0 = disabled. */
  imageMaximumGCAge: number;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  serializeImagePulls: boolean;
  /** null = unlimited (when serializeImagePulls is false). */
  maxParallelImagePulls: number | null;
  registryPullQPS: number;
  registryBurst: number;
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  /** Milliseconds per signal. */
  evictionSoftGracePeriod: Record<string, number>;
  evictionMinimumReclaim: Record<string, string>;
  evictionPressureTransitionPeriod: number;
  evictionMaxPodGracePeriod: number;
  mergeDefaultEvictionSettings: boolean;
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  enforceNodeAllocatable: string[];
  cgroupDriver: CgroupDriver;
  cgroupRoot: string;
  cgroupsPerQOS: boolean;
  failSwapOn: boolean;
  /** emptyDir sizeLimit and ephemeral-storage limits are enforced by eviction. */
  localStorageCapacityIsolation: boolean;
  oomScoreAdj: number;
  clusterDNS: string[];
  clusterDomain: string;
  resolvConf: string;
  hairpinMode: HairpinMode;
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  eventRecordQPS: number;
  eventBurst: number;
  containerLogMaxSize: string;
  containerLogMaxFiles: number;
  containerLogMaxWorkers: number;
  containerLogMonitorInterval: number;
  shutdownGracePeriod: number;
  shutdownGracePeriodCriticalPods: number;
  featureGates: Record<string, boolean>;
  /** Serve /containerLogs, /runningpods, /debug/flags/v and /debug/pprof (each also behind its own switch). */
  enableDebuggingHandlers: boolean;
  /** Serve /logs/. */
  enableSystemLogHandler: boolean;
  /** Serve /debug/pprof/ (with enableDebuggingHandlers). */
  enableProfilingHandler: boolean;
  /** Serve /debug/flags/v (with enableDebuggingHandlers). */
  enableDebugFlagsHandler: boolean;
  /**
   * Upstream settings kubelet-ts does not model, by field path or flag name,
   * as set in the file or on the command line (settings-catalog.ts).
   */
  otherSettings: Record<string, unknown>;
  /** `--v` and `--logging-format` override these. */
  logging: { format: LoggingFormat; verbosity: number };

  // --- Flag-only settings (never in the file) ---
  /** Path of the --config file, '' when none. */
  configFile: string;
  /** '' = standalone mode (no API server). */
  kubeconfig: string;
  /** '' = no TLS bootstrap. */
  bootstrapKubeconfig: string;
  /** Directory of TLS certificates; '' = <rootDir>/pki. */
  certDir: string;
  rootDir: string;
  /** Directory of the `<pod>_<ns>_<container>-<id>.log` links to container logs; '' = none. */
  containerLogsDir: string;
  hostnameOverride: string;
  /** hostnameOverride, or the OS hostname, lower-cased (upstream nodeutil.GetHostname). */
  nodeName: string;
  /** Comma-separated IPs as given; '' = auto-detect. */
  nodeIp: string;
  nodeLabels: Record<string, string>;
  runonce: boolean;
  /** Worker threads for CRI decode/relist; 0 = inline mode (no worker threads). */
  workerThreads: number;
  relistMode: RelistMode;
  pleg: PlegMode;
  /** Period of image garbage collection and image detection (upstream's fixed ImageGCPeriod, 5m). */
  imageGcPeriod: number;
  /** Pods with more containers (init, regular and ephemeral) are rejected at admission; 0 = no limit (upstream has none). */
  maxContainersPerPod: number;
}

/** The fields a KubeletConfiguration file may set (the file schema's keys minus apiVersion/kind). */
export type FileField = Exclude<keyof KubeletConfigurationFile, 'apiVersion' | 'kind'>;

/** Upstream treats these file values as "unset" when zero/empty, and keeps the default. */
const ZERO_MEANS_DEFAULT = new Set<FileField>([
  'syncFrequency',
  'fileCheckFrequency',
  'httpCheckFrequency',
  'address',
  'port',
  'healthzBindAddress',
  'maxPods',
  'runtimeRequestTimeout',
  'containerRuntimeEndpoint',
  'podLogsDir',
  'nodeStatusUpdateFrequency',
  'nodeStatusReportFrequency',
  'nodeLeaseDurationSeconds',
  'imageMinimumGCAge',
  'registryBurst',
  'eventBurst',
  'kubeAPIBurst',
  'containerLogMaxSize',
  'evictionPressureTransitionPeriod',
]);

/**
 * Applies a validated file onto `base` (the defaults) with upstream defaulting
 * rules. Returns the fields the file actually set (after zero-means-default).
 */
export function applyConfigFile(base: KubeletConfig, file: KubeletConfigurationFile): Set<string> {
  const set = new Set<string>();
  const target = base as unknown as Record<string, unknown>;
  const other = otherTopLevelKeys();
  for (const [key, value] of Object.entries(file) as [string, unknown][]) {
    if (key === 'apiVersion' || key === 'kind' || key === 'logging' || value === undefined) continue;
    if (key in ServerConfigFileFields || other.has(key)) continue;
    if (ZERO_MEANS_DEFAULT.has(key as FileField) && (value === 0 || value === '')) continue;
    target[key] = value;
    set.add(key);
  }
  for (const key of applyServerFile(base, file)) set.add(key);
  for (const key of collectOtherFields(file, base.otherSettings)) set.add(`other.${key}`);
  if (file.logging?.format !== undefined) {
    base.logging.format = file.logging.format;
    set.add('logging.format');
  }
  if (file.logging?.verbosity !== undefined) {
    base.logging.verbosity = file.logging.verbosity;
    set.add('logging.verbosity');
  }
  // nodeStatusReportFrequency follows an explicit nodeStatusUpdateFrequency (upstream backward compatibility).
  if (set.has('nodeStatusUpdateFrequency') && !set.has('nodeStatusReportFrequency')) {
    base.nodeStatusReportFrequency = base.nodeStatusUpdateFrequency;
  }
  if (base.podPidsLimit < 0) base.podPidsLimit = -1;
  if (file.evictionHard !== undefined && base.mergeDefaultEvictionSettings) {
    base.evictionHard = { ...DEFAULT_EVICTION_HARD, ...file.evictionHard };
  }
  // serializeImagePulls defaults to false once maxParallelImagePulls > 1 is set.
  if (!set.has('serializeImagePulls') && base.maxParallelImagePulls !== null && base.maxParallelImagePulls > 1) {
    base.serializeImagePulls = false;
  }
  return set;
}
