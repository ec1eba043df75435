/**
 * The kubelet-ts command line (commander@14), with upstream kubelet flag names.
 *
 * Contract:
 * - `parseFlags` reports only flags the user actually set; flag defaults shown
 *   in --help are documentation, applied by load-config.ts, so that a default
 *   never overrides a --config file value (as upstream).
 * - Values are converted here (durations to ms, ints, Kubernetes-style bools,
 *   maps); every bad value, unknown flag and stray argument is collected in
 *   `errors` (reported together with the config file's problems).
 * - Besides kubelet-ts's own flags (FLAG_SPECS), every upstream flag of the
 *   settings catalog parses (catalogFlagSpecs); what it does is the catalog's.
 * - Repeatable map/list flags follow pflag: the first use replaces the
 *   default/file value, later uses add to it.
 * - The program is built fresh per call: commander keeps state between parses.
 */
import { CGROUP_DRIVERS, HAIRPIN_MODES, LOGGING_FORMATS, PLEG_MODES, RELIST_MODES, type KubeletConfig } from './kubelet-config.js';
import { SERVER_FLAG_SPECS, type ServerNestedKey } from './server-config.js';
import { UPSTREAM_SETTINGS, configKey, isOther, otherKey } from './settings-catalog.js';
import type { SettingStatus, ValueType } from './settings-types.js';

/** A resolved-config key a flag writes; logging sub-fields are dotted. */
export type FlagTarget =
  | Exclude<keyof KubeletConfig, 'logging' | 'nodeName' | 'authentication' | 'authorization'>
  | 'logging.format'
  | 'logging.verbosity'
  | ServerNestedKey
  /** An upstream setting kubelet-ts does not model (KubeletConfig.otherSettings). */
  | `other.${string}`;

export type FlagKind =
  | 'string'
  | 'duration'
  | 'int'
  | 'float'
  | 'bool'
  | 'enum'
  | 'colonMultimap'
  | 'list'
  | 'langleMap'
  | 'map'
  | 'taints'
  | 'featureGates'
  | 'gracePeriods';

export interface FlagSpec {
  /** Long name without dashes, e.g. 'sync-frequency'. */
  readonly name: string;
  readonly short?: string;
  readonly target: FlagTarget;
  readonly kind: FlagKind;
  /** Value placeholder in --help. */
  readonly arg: string;
  readonly help: string;
  /** The default as shown in --help. */
  readonly defaultText: string;
  readonly choices?: readonly string[];
  /** An upstream flag of the settings catalog: what kubelet-ts does with it (--help groups by it). */
  readonly status?: SettingStatus;
}

const spec = (
  name: string,
  target: FlagTarget,
  kind: FlagKind,
  arg: string,
  defaultText: string,
  help: string,
  extra: { short?: string; choices?: readonly string[]; status?: SettingStatus } = {},
): FlagSpec => ({ name, target, kind, arg, defaultText, help, ...extra });

/** Every flag, in --help order. docs/configuration.md mirrors this table. */
export const FLAG_SPECS: readonly FlagSpec[] = [
  spec(
    'config',
    'configFile',
    'string',
    'path',
    '""',
    'Load the initial configuration from this KubeletConfiguration file. Command-line flags that are explicitly set override it.',
  ),
  spec('kubeconfig', 'kubeconfig', 'string', 'path', '""', 'Path to a kubeconfig file for the API server. Omit it to run standalone.'),
  spec(
    'bootstrap-kubeconfig',
    'bootstrapKubeconfig',
    'string',
    'path',
    '""',
    'Kubeconfig used to request a client certificate (TLS bootstrap) when --kubeconfig does not exist yet; the issued certificate goes to --cert-dir and --kubeconfig is written to point at it.',
  ),
  spec(
    'cert-dir',
    'certDir',
    'string',
    'path',
    '<root-dir>/pki',
    'Directory of the TLS certificates (the bootstrapped client certificate).',
  ),
  spec('kube-api-qps', 'kubeAPIQPS', 'int', 'qps', '50', 'QPS to use while talking with the apiserver.'),
  spec('kube-api-burst', 'kubeAPIBurst', 'int', 'n', '100', 'Burst to use while talking with the apiserver.'),
  spec('event-qps', 'eventRecordQPS', 'int', 'qps', '50', 'Events the kubelet may send per second (0 = unlimited).'),
  spec('event-burst', 'eventBurst', 'int', 'n', '100', 'Maximum size of a burst of event records (with --event-qps > 0).'),
  spec(
    'hostname-override',
    'hostnameOverride',
    'string',
    'name',
    '"" (OS hostname)',
    'Use this name as the node name instead of the hostname.',
  ),
  spec('node-ip', 'nodeIp', 'string', 'ips', '"" (auto-detect)', 'IP address (or comma-separated dual-stack addresses) of the node.'),
  spec('node-labels', 'nodeLabels', 'map', 'key=value,...', '""', 'Labels to add when registering the node (repeatable).'),
  spec('root-dir', 'rootDir', 'string', 'path', '/var/lib/kubelet', 'Directory for kubelet files.'),
  spec('runonce', 'runonce', 'bool', 'bool', 'false', 'Exit after spawning pods from static pod files or remote URLs.'),
  spec('v', 'logging.verbosity', 'int', 'level', '0', 'Log verbosity (klog-style; 4 enables debug, 5 trace).', { short: 'v' }),
  spec('logging-format', 'logging.format', 'enum', 'format', 'text', 'Log format.', { choices: LOGGING_FORMATS }),
  spec(
    'worker-threads',
    'workerThreads',
    'int',
    'n',
    'ceil(maxPods / 300), at most min(4, available parallelism)',
    'Worker threads for runtime calls and decoding; 0 = inline mode (no worker threads).',
  ),
  spec('relist-mode', 'relistMode', 'enum', 'mode', 'parallel', 'How PLEG relists sandboxes and containers.', { choices: RELIST_MODES }),
  spec(
    'image-gc-period',
    'imageGcPeriod',
    'duration',
    'duration',
    '5m0s',
    "How often images are detected and image GC runs (kubelet-ts only; upstream's fixed ImageGCPeriod is 5m).",
  ),
  spec(
    'max-containers-per-pod',
    'maxContainersPerPod',
    'int',
    'n',
    '250',
    'Pods with more containers (init, regular and ephemeral together) are rejected at admission, reason TooManyContainers; 0 = no limit (kubelet-ts only; upstream has no limit).',
  ),
  spec('pleg', 'pleg', 'enum', 'mode', 'generic', 'Pod lifecycle event generator.', { choices: PLEG_MODES }),

  spec(
    'pod-manifest-path',
    'staticPodPath',
    'string',
    'path',
    '""',
    'Directory of static pod files, or a single static pod file. Files starting with dots are ignored.',
  ),
  spec('manifest-url', 'staticPodURL', 'string', 'url', '""', 'URL for additional pod specifications to run.'),
  spec(
    'manifest-url-header',
    'staticPodURLHeader',
    'colonMultimap',
    'key:value,...',
    '""',
    "HTTP headers for --manifest-url, comma-separated key:value pairs; repeatable, and repeated names keep their order, e.g. --manifest-url-header 'a:hello,b:again' --manifest-url-header 'b:beautiful'.",
  ),
  spec(
    'sync-frequency',
    'syncFrequency',
    'duration',
    'duration',
    '1m0s',
    'Max period between synchronizing running containers and config.',
  ),
  spec(
    'file-check-frequency',
    'fileCheckFrequency',
    'duration',
    'duration',
    '20s',
    'Duration between checking static pod files for new data.',
  ),
  spec(
    'http-check-frequency',
    'httpCheckFrequency',
    'duration',
    'duration',
    '20s',
    'Duration between checking the manifest URL for new data.',
  ),

  spec(
    'container-runtime-endpoint',
    'containerRuntimeEndpoint',
    'string',
    'endpoint',
    'unix:///run/containerd/containerd.sock',
    "CRI runtime endpoint, e.g. unix:///run/containerd/containerd.sock; 'sim' runs the embedded simulated runtime.",
  ),
  spec(
    'image-service-endpoint',
    'imageServiceEndpoint',
    'string',
    'endpoint',
    '"" (same as --container-runtime-endpoint)',
    'CRI image service endpoint.',
  ),
  spec(
    'runtime-request-timeout',
    'runtimeRequestTimeout',
    'duration',
    'duration',
    '2m0s',
    'Timeout of runtime requests except long-running ones (pull, logs, exec, attach).',
  ),
  spec('pod-logs-dir', 'podLogsDir', 'string', 'path', '/var/log/pods', 'Directory for container logs (config field podLogsDir).'),
  spec(
    'container-logs-dir',
    'containerLogsDir',
    'string',
    'path',
    '/var/log/containers',
    "Directory of the <pod>_<namespace>_<container>-<id>.log links to container logs, for log shippers ('' = none; upstream's is fixed).",
  ),
  spec(
    'container-log-max-size',
    'containerLogMaxSize',
    'string',
    'quantity',
    '10Mi',
    'Maximum size of a container log file before it is rotated.',
  ),
  spec('container-log-max-files', 'containerLogMaxFiles', 'int', 'n', '5', 'Maximum number of log files per container (>= 2).'),

  spec('enable-server', 'enableServer', 'bool', 'bool', 'true', "Enable the kubelet's server."),
  spec('address', 'address', 'string', 'ip', '0.0.0.0', 'IP address for the kubelet server.'),
  spec('port', 'port', 'int', 'port', '10250', 'Port for the kubelet server.'),
  spec(
    'read-only-port',
    'readOnlyPort',
    'int',
    'port',
    '10255 without --config, 0 with --config',
    'Read-only port without authentication (0 = disabled).',
  ),
  ...SERVER_FLAG_SPECS,
  spec('healthz-port', 'healthzPort', 'int', 'port', '10248', 'Port of the healthz endpoint (0 = disabled).'),
  spec('healthz-bind-address', 'healthzBindAddress', 'string', 'ip', '127.0.0.1', 'IP address for the healthz server.'),

  spec('max-pods', 'maxPods', 'int', 'n', '110', 'Number of pods that can run on this node.'),
  spec(
    'pod-cidr',
    'podCIDR',
    'string',
    'cidr',
    '""',
    "Pod CIDR passed to the runtime at start; in a cluster the node's spec.podCIDRs replace it.",
  ),
  spec('pod-max-pids', 'podPidsLimit', 'int', 'n', '-1', 'Maximum number of processes per pod; -1 = node allocatable pid capacity.'),
  spec(
    'register-with-taints',
    'registerWithTaints',
    'taints',
    'key=value:Effect,...',
    '""',
    'Register the node with these taints (comma-separated key=value:Effect; ignored if --register-node is false).',
  ),
  spec(
    'node-status-max-images',
    'nodeStatusMaxImages',
    'int',
    'n',
    '50',
    'Maximum number of images reported in the node status (-1 = no cap).',
  ),
  spec('register-node', 'registerNode', 'bool', 'bool', 'true', 'Register the node with the API server (needs --kubeconfig).'),
  spec(
    'node-status-update-frequency',
    'nodeStatusUpdateFrequency',
    'duration',
    'duration',
    '10s',
    'How often the node status is computed and posted when changed.',
  ),

  spec(
    'minimum-image-ttl-duration',
    'imageMinimumGCAge',
    'duration',
    'duration',
    '2m0s',
    'Minimum age of an unused image before it is garbage collected.',
  ),
  spec(
    'image-gc-high-threshold',
    'imageGCHighThresholdPercent',
    'int',
    'percent',
    '85',
    'Disk usage percent above which image GC always runs (0-100).',
  ),
  spec(
    'image-gc-low-threshold',
    'imageGCLowThresholdPercent',
    'int',
    'percent',
    '80',
    'Disk usage percent image GC frees down to (0-100, below the high threshold).',
  ),
  spec('serialize-image-pulls', 'serializeImagePulls', 'bool', 'bool', 'true', 'Pull images one at a time.'),
  spec(
    'eviction-hard',
    'evictionHard',
    'langleMap',
    'signal<threshold,...',
    'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%',
    'Hard eviction thresholds (repeatable).',
  ),
  spec(
    'system-reserved',
    'systemReserved',
    'map',
    'resource=quantity,...',
    '""',
    'Resources reserved for non-Kubernetes components, e.g. cpu=200m,memory=500Mi (repeatable).',
  ),
  spec(
    'kube-reserved',
    'kubeReserved',
    'map',
    'resource=quantity,...',
    '""',
    'Resources reserved for Kubernetes system components (repeatable).',
  ),
  spec(
    'enforce-node-allocatable',
    'enforceNodeAllocatable',
    'list',
    'levels',
    'pods',
    "Comma-separated node allocatable enforcement levels: 'none', 'pods', 'system-reserved', 'kube-reserved'.",
  ),

  spec('cgroup-driver', 'cgroupDriver', 'enum', 'driver', 'cgroupfs', 'Cgroup driver; must match the runtime.', {
    choices: CGROUP_DRIVERS,
  }),
  spec('fail-swap-on', 'failSwapOn', 'bool', 'bool', 'true', 'Fail to start if swap is enabled on the node.'),
  spec(
    'cluster-dns',
    'clusterDNS',
    'list',
    'ips',
    '""',
    'Comma-separated cluster DNS server IPs for dnsPolicy=ClusterFirst pods (repeatable).',
  ),
  spec('cluster-domain', 'clusterDomain', 'string', 'domain', '""', 'Cluster domain added to container DNS search paths.'),
  spec('resolv-conf', 'resolvConf', 'string', 'path', '/etc/resolv.conf', 'Resolver configuration used as the basis for container DNS.'),
  spec('hairpin-mode', 'hairpinMode', 'enum', 'mode', 'promiscuous-bridge', 'How the kubelet sets up hairpin NAT.', {
    choices: HAIRPIN_MODES,
  }),
];

const KIND_OF: Record<ValueType, FlagKind> = {
  bool: 'bool',
  int: 'int',
  float: 'float',
  string: 'string',
  duration: 'duration',
  strings: 'list',
  ints: 'string',
  map: 'map',
  thresholds: 'langleMap',
  gracePeriods: 'gracePeriods',
  featureGates: 'featureGates',
  object: 'string',
  objects: 'string',
};

/** The upstream flags of the settings catalog that kubelet-ts has no own spec for. */
export function catalogFlagSpecs(): FlagSpec[] {
  const own = new Set(FLAG_SPECS.map((s) => s.name));
  const out: FlagSpec[] = [];
  for (const s of UPSTREAM_SETTINGS) {
    if (!s.flag || own.has(s.flag)) continue;
    if (!s.type) throw new Error(`settings catalog: --${s.flag} needs a type`);
    const kind = KIND_OF[s.type];
    const target: FlagTarget = isOther(s) ? `other.${otherKey(s)}` : (configKey(s) as FlagTarget);
    const defaultText = isOther(s) ? (JSON.stringify(s.neutral) ?? '""') : 'as the config file';
    out.push(spec(s.flag, target, kind, kind === 'bool' ? 'bool' : 'value', defaultText, s.note, { status: s.status }));
  }
  return out;
}

let allSpecs: readonly FlagSpec[] | undefined;
/** kubelet-ts's flags and the catalog's upstream flags. */
export function allFlagSpecs(): readonly FlagSpec[] {
  return (allSpecs ??= [...FLAG_SPECS, ...catalogFlagSpecs()]);
}
