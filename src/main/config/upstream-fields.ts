/**
 * Every field of the upstream `kubelet.config.k8s.io/v1beta1`
 * KubeletConfiguration (the v1.20 fields and those added since, from
 * staging/src/k8s.io/kubelet/config/v1beta1/types.go), with the flag that
 * sets it and what kubelet-ts does with it. Nested fields are dotted.
 *
 * Statuses (see settings-catalog.ts for how they are enforced):
 * - honoured: does what upstream does;
 * - explained: accepted; upstream's effect cannot apply here, and a value
 *   other than upstream's default gets one startup line with the note;
 * - refused: a value other than upstream's default is an error whose
 *   message is the note (what to use instead).
 *
 * `key` is where the value lives in KubeletConfig when kubelet-ts models the
 * setting (default: the field name when it is a KubeletConfig key); the
 * other settings keep their value in `otherSettings`, parsed as `type`, and
 * compare against `neutral`: the value kubelet-ts behaves as (upstream's
 * default, or the one setting that matches what kubelet-ts does).
 */
import type { UpstreamSetting, ValueType } from './settings-types.js';

interface Opts {
  flag?: string;
  key?: string;
  type?: ValueType;
  neutral?: unknown;
}

const entry =
  (status: UpstreamSetting['status']) =>
  (field: string, note: string, options: Opts = {}): UpstreamSetting => ({ field, status, note, ...options });
const h = entry('honoured');
const x = entry('explained');
const r = entry('refused');

const NO_CGROUPS = 'kubelet-ts creates only the QoS and pod cgroups (cgroupsPerQOS), no node-level or reserved cgroups';
const NO_MEMCG = 'memory is measured every eviction monitoring period (10 s); no memcg threshold notifications.';

export const UPSTREAM_FIELDS: readonly UpstreamSetting[] = [
  h('enableServer', 'Serves the kubelet HTTPS server.', { flag: 'enable-server' }),
  h('staticPodPath', 'Static pods from a directory or file.', { flag: 'pod-manifest-path' }),
  h('podLogsDir', 'Root of the pod log directories.'),
  h('syncFrequency', 'Period of the pod resync.', { flag: 'sync-frequency' }),
  h('fileCheckFrequency', 'Re-read period of static pod files.', { flag: 'file-check-frequency' }),
  h('httpCheckFrequency', 'Re-fetch period of the manifest URL.', { flag: 'http-check-frequency' }),
  h('staticPodURL', 'Static pods from a URL.', { flag: 'manifest-url' }),
  h('staticPodURLHeader', 'Headers of the manifest URL request.', { flag: 'manifest-url-header' }),
  h('address', 'Bind address of the kubelet server.', { flag: 'address' }),
  h('port', 'Port of the kubelet server.', { flag: 'port' }),
  h('readOnlyPort', 'Port of the read-only server (0 = off).', { flag: 'read-only-port' }),
  h('tlsCertFile', 'Serving certificate.', { flag: 'tls-cert-file' }),
  h('tlsPrivateKeyFile', 'Serving key.', { flag: 'tls-private-key-file' }),
  r('tlsCipherSuites', "Go cipher suite names do not map onto Node's OpenSSL ciphers; leave it unset (Node's defaults, TLS 1.2+).", {
    flag: 'tls-cipher-suites',
    type: 'strings',
    neutral: [],
  }),
  r('tlsCurvePreferences', "leave it unset (Node's default curves).", { type: 'ints', neutral: [] }),
  r('tlsMinVersion', 'leave it unset: the server accepts TLS 1.2 and 1.3.', { flag: 'tls-min-version', type: 'string', neutral: '' }),
  x(
    'rotateCertificates',
    'the client certificate is renewed through TLS bootstrap (--bootstrap-kubeconfig) when it is missing or expired at start; it is not rotated while running.',
    { flag: 'rotate-certificates', type: 'bool', neutral: false },
  ),
  r('serverTLSBootstrap', 'set tlsCertFile/tlsPrivateKeyFile, or leave both unset for a self-signed serving certificate.', {
    flag: 'rotate-server-certificates',
    type: 'bool',
    neutral: false,
  }),
  h('authentication.x509.clientCAFile', 'Client certificate authentication.', { flag: 'client-ca-file' }),
  h('authentication.webhook.enabled', 'TokenReview authentication.', { flag: 'authentication-token-webhook' }),
  h('authentication.webhook.cacheTTL', 'TokenReview cache.', { flag: 'authentication-token-webhook-cache-ttl' }),
  h('authentication.anonymous.enabled', 'Anonymous requests.', { flag: 'anonymous-auth' }),
  h('authorization.mode', 'AlwaysAllow or Webhook (SubjectAccessReview).', { flag: 'authorization-mode' }),
  h('authorization.webhook.cacheAuthorizedTTL', 'SubjectAccessReview cache (allowed).', {
    flag: 'authorization-webhook-cache-authorized-ttl',
  }),
  h('authorization.webhook.cacheUnauthorizedTTL', 'SubjectAccessReview cache (denied).', {
    flag: 'authorization-webhook-cache-unauthorized-ttl',
  }),
  h('registryPullQPS', 'Token bucket of image pulls.', { type: 'int', flag: 'registry-qps' }),
  h('registryBurst', 'Burst of image pulls.', { type: 'int', flag: 'registry-burst' }),
  r('imagePullCredentialsVerificationPolicy', 'leave it unset: images present on the node are used without re-verifying credentials.', {
    type: 'string',
    neutral: '',
  }),
  r('preloadedImagesVerificationAllowlist', 'leave it unset (see imagePullCredentialsVerificationPolicy).', {
    type: 'strings',
    neutral: [],
  }),
  h('eventRecordQPS', 'Rate limit of events.', { flag: 'event-qps' }),
  h('eventBurst', 'Burst of events.', { flag: 'event-burst' }),
  h('enableDebuggingHandlers', '/containerLogs, /runningpods, /debug/flags/v and the profiles are served only when true.', {
    flag: 'enable-debugging-handlers',
    type: 'bool',
  }),
  x('enableContentionProfiling', 'Node has no block profile; the CPU and heap profiles are served without it.', {
    flag: 'contention-profiling',
    type: 'bool',
    neutral: false,
  }),
  h('healthzPort', 'Port of /healthz (0 = off).', { flag: 'healthz-port' }),
  h('healthzBindAddress', 'Bind address of /healthz.', { flag: 'healthz-bind-address' }),
  h('oomScoreAdj', "Written to the agent's /proc/self/oom_score_adj at start.", { type: 'int', flag: 'oom-score-adj' }),
  h('clusterDomain', 'DNS search domain of pods.', { flag: 'cluster-domain' }),
  h('clusterDNS', 'DNS servers of ClusterFirst pods.', { flag: 'cluster-dns' }),
  x('streamingConnectionIdleTimeout', 'it has no effect upstream either (deprecated).', {
    flag: 'streaming-connection-idle-timeout',
    type: 'duration',
    neutral: 14_400_000,
  }),
  h('nodeStatusUpdateFrequency', 'Node status computation period.', { flag: 'node-status-update-frequency' }),
  h('nodeStatusReportFrequency', 'Node status report period when nothing changed.'),
  h('nodeLeaseDurationSeconds', 'Duration of the node lease.'),
  h('imageMinimumGCAge', 'Image GC spares an unused image detected less than this long ago.', { flag: 'minimum-image-ttl-duration' }),
  x('imageMaximumGCAge', 'not in v1.20: image GC removes unused images by disk usage only (imageGCHighThresholdPercent).'),
  h('imageGCHighThresholdPercent', 'Image fs usage at which image GC runs (100 disables it).', { flag: 'image-gc-high-threshold' }),
  h('imageGCLowThresholdPercent', 'Image fs usage image GC frees down to.', { flag: 'image-gc-low-threshold' }),
  x('volumeStatsAggPeriod', 'volume usage is measured when /stats/summary is asked for, not cached per period.', {
    flag: 'volume-stats-agg-period',
    type: 'duration',
    neutral: 60_000,
  }),
  r('kubeletCgroups', `${NO_CGROUPS}; place the agent with the systemd unit (Slice=, see docs/operations.md).`, {
    flag: 'kubelet-cgroups',
    type: 'string',
    neutral: '',
  }),
  r('systemCgroups', `${NO_CGROUPS}; place system daemons with systemd slices.`, { flag: 'system-cgroups', type: 'string', neutral: '' }),
  h('cgroupRoot', 'Parent of the kubepods cgroup (with cgroupsPerQOS).', { type: 'string', flag: 'cgroup-root' }),
  h(
    'cgroupsPerQOS',
    'QoS tiers (kubepods, burstable, besteffort) and a cgroup per pod, the sandbox cgroup_parent; removed with the pod. Default true, as upstream; with the simulated runtime no cgroups are made (one startup line).',
    { type: 'bool', flag: 'cgroups-per-qos' },
  ),
  h('cgroupDriver', 'cgroupfs, or systemd (upstream slice names, written through the cgroup filesystem). Must match the runtime.', {
    flag: 'cgroup-driver',
  }),
  r('cpuManagerPolicy', 'the CPU manager is not built; use "none".', { flag: 'cpu-manager-policy', type: 'string', neutral: 'none' }),
  r('singleProcessOOMKill', 'leave it unset (the runtime default applies).', { type: 'bool', neutral: null }),
  r('cpuManagerPolicyOptions', 'the CPU manager is not built.', { type: 'map', neutral: {} }),
  x('cpuManagerReconcilePeriod', 'the CPU manager is not built.', {
    flag: 'cpu-manager-reconcile-period',
    type: 'duration',
    neutral: 10_000,
  }),
  x('draManagerReconcilePeriod', 'dynamic resource allocation is not built.', { type: 'duration', neutral: 60_000 }),
  r('memoryManagerPolicy', 'the memory manager is not built; use "None".', {
    flag: 'memory-manager-policy',
    type: 'string',
    neutral: 'None',
  }),
  r('topologyManagerPolicy', 'the topology manager is not built; use "none".', {
    flag: 'topology-manager-policy',
    type: 'string',
    neutral: 'none',
  }),
  r('topologyManagerScope', 'the topology manager is not built; use "container".', {
    flag: 'topology-manager-scope',
    type: 'string',
    neutral: 'container',
  }),
  r('topologyManagerPolicyOptions', 'the topology manager is not built.', { type: 'map', neutral: {} }),
  r('qosReserved', 'memory reservations of the QoS tiers are not built; leave it unset.', {
    flag: 'qos-reserved',
    type: 'map',
    neutral: {},
  }),
  h('runtimeRequestTimeout', 'Timeout of CRI calls.', { flag: 'runtime-request-timeout' }),
  x('hairpinMode', 'the CNI plugin of the runtime sets up pod networking, hairpin included.', { flag: 'hairpin-mode' }),
  h('maxPods', 'Admission limit and node capacity.', { flag: 'max-pods' }),
  h('podCIDR', 'Pod CIDR passed to the runtime (CRI UpdateRuntimeConfig) at start; node.spec.podCIDRs replace it.', { flag: 'pod-cidr' }),
  h('podPidsLimit', 'pids.max of each pod cgroup; needs cgroupsPerQOS (refused at start without it).', { flag: 'pod-max-pids' }),
  h('resolvConf', 'Base of pod DNS.', { flag: 'resolv-conf' }),
  r('runOnce', 'run-once mode is not built; run the agent as a service.', { flag: 'runonce', key: 'runonce' }),
  h('cpuCFSQuota', 'CPU limits become CFS quotas of containers and pod cgroups; false leaves them unlimited.', {
    flag: 'cpu-cfs-quota',
    type: 'bool',
    neutral: true,
  }),
  r('cpuCFSQuotaPeriod', 'the period is 100ms; leave it unset.', { flag: 'cpu-cfs-quota-period', type: 'duration', neutral: 100 }),
  h('nodeStatusMaxImages', 'Images in the node status.', { flag: 'node-status-max-images' }),
  x('maxOpenFiles', 'Node cannot raise its own file limit: set LimitNOFILE= in the unit (docs/operations.md).', {
    flag: 'max-open-files',
    type: 'int',
    neutral: 1_000_000,
  }),
  x('contentType', 'the apiserver client (@kubernetes/client-node) speaks JSON only.', {
    flag: 'kube-api-content-type',
    type: 'string',
    neutral: 'application/vnd.kubernetes.protobuf',
  }),
  h('kubeAPIQPS', 'Rate limit of the apiserver client.', { flag: 'kube-api-qps' }),
  h('kubeAPIBurst', 'Burst of the apiserver client.', { flag: 'kube-api-burst' }),
  h('serializeImagePulls', 'One pull at a time on the node.', { flag: 'serialize-image-pulls' }),
  h('maxParallelImagePulls', 'Concurrent pulls.'),
  h('evictionHard', 'Thresholds below which the eviction manager reclaims and evicts at once (grace period 0).', {
    flag: 'eviction-hard',
  }),
  h('evictionSoft', 'Thresholds that evict once met for their evictionSoftGracePeriod.', { type: 'thresholds', flag: 'eviction-soft' }),
  h('evictionSoftGracePeriod', 'How long a soft threshold must be met before pods are evicted.', {
    type: 'gracePeriods',
    flag: 'eviction-soft-grace-period',
  }),
  h('evictionPressureTransitionPeriod', 'How long a pressure condition stays after the signal clears.', {
    type: 'duration',
    flag: 'eviction-pressure-transition-period',
  }),
  h('evictionMaxPodGracePeriod', 'Grace period of a pod evicted for a soft threshold.', {
    type: 'int',
    flag: 'eviction-max-pod-grace-period',
  }),
  h('evictionMinimumReclaim', 'How far past a threshold eviction goes before it stops.', {
    type: 'thresholds',
    flag: 'eviction-minimum-reclaim',
  }),
  h('mergeDefaultEvictionSettings', 'Merges evictionHard over the defaults.'),
  h('podsPerCore', 'Caps pods per CPU core.', { type: 'int', flag: 'pods-per-core' }),
  x('enableControllerAttachDetach', 'kubelet-ts attaches no volumes (its volume types need no attach).', {
    flag: 'enable-controller-attach-detach',
    type: 'bool',
    neutral: true,
  }),
  r('protectKernelDefaults', 'kubelet-ts neither checks nor tunes kernel sysctls; leave it false.', {
    flag: 'protect-kernel-defaults',
    type: 'bool',
    neutral: false,
  }),
  x('makeIPTablesUtilChains', 'kubelet-ts creates no iptables chains.', { flag: 'make-iptables-util-chains', type: 'bool', neutral: true }),
  x('iptablesMasqueradeBit', 'it has no effect upstream either (deprecated).', {
    flag: 'iptables-masquerade-bit',
    type: 'int',
    neutral: 14,
  }),
  x('iptablesDropBit', 'it has no effect upstream either (deprecated).', { flag: 'iptables-drop-bit', type: 'int', neutral: 15 }),
  x('featureGates', 'gates are checked as upstream does (unknown or locked gates are errors), but no gate changes what kubelet-ts does.', {
    type: 'featureGates',
    flag: 'feature-gates',
  }),
  h('failSwapOn', 'The agent does not start while swap is on (/proc/swaps).', { flag: 'fail-swap-on' }),
  r('memorySwap.swapBehavior', 'swap for pods is not built; leave it unset (NoSwap).', { type: 'string', neutral: '' }),
  h('containerLogMaxSize', 'Rotation size of container logs.', { flag: 'container-log-max-size' }),
  h('containerLogMaxFiles', 'Log files kept per container.', { flag: 'container-log-max-files' }),
  h('containerLogMaxWorkers', 'Containers rotated at once.'),
  h('containerLogMonitorInterval', 'Period of the rotation check.'),
  x('configMapAndSecretChangeDetectionStrategy', 'configMap and secret volumes are re-read from the apiserver on every pod sync.', {
    type: 'string',
    neutral: 'Watch',
  }),
  h('systemReserved', 'Subtracted from allocatable.', { flag: 'system-reserved' }),
  h('kubeReserved', 'Subtracted from allocatable.', { flag: 'kube-reserved' }),
  r('reservedSystemCPUs', 'the CPU manager is not built; reserve CPUs with systemReserved/kubeReserved.', {
    flag: 'reserved-cpus',
    type: 'string',
    neutral: '',
  }),
  x('showHiddenMetricsForVersion', 'kubelet-ts hides no metrics.', {
    flag: 'show-hidden-metrics-for-version',
    type: 'string',
    neutral: '',
  }),
  r('systemReservedCgroup', `${NO_CGROUPS}; leave it unset.`, { flag: 'system-reserved-cgroup', type: 'string', neutral: '' }),
  r('kubeReservedCgroup', `${NO_CGROUPS}; leave it unset.`, { flag: 'kube-reserved-cgroup', type: 'string', neutral: '' }),
  x(
    'enforceNodeAllocatable',
    'with cgroupsPerQOS, "pods" caps the kubepods cgroup at capacity minus systemReserved and kubeReserved (cpu, memory) as upstream; "system-reserved" and "kube-reserved" are not enforced (no reserved cgroups), and without cgroupsPerQOS allocatable is enforced by pod admission only.',
    { flag: 'enforce-node-allocatable' },
  ),
  r('allowedUnsafeSysctls', 'only the safe sysctls are allowed in pods.', { flag: 'allowed-unsafe-sysctls', type: 'strings', neutral: [] }),
  r('volumePluginDir', 'FlexVolume plugins are not supported; leave it at its default.', {
    flag: 'volume-plugin-dir',
    type: 'string',
    neutral: '/usr/libexec/kubernetes/kubelet-plugins/volume/exec/',
  }),
  h('providerID', 'Set in the node spec at registration.', { type: 'string', flag: 'provider-id' }),
  x('kernelMemcgNotification', NO_MEMCG, {
    flag: 'kernel-memcg-notification',
    type: 'bool',
    neutral: false,
  }),
  h('logging.format', 'text (klog-style) or json (upstream shape).', { flag: 'logging-format' }),
  r('logging.sanitization', 'log sanitization (v1.20, removed since) is not built.', {
    flag: 'experimental-logging-sanitization',
    type: 'bool',
    neutral: false,
  }),
  x('logging.flushFrequency', 'log lines are written synchronously; there is nothing to flush.', {
    flag: 'log-flush-frequency',
    type: 'duration',
    neutral: 5_000,
  }),
  h('logging.verbosity', 'klog-style verbosity; changeable at run time through /debug/flags/v.', { flag: 'v' }),
  r('logging.vmodule', 'per-file verbosity is not built; use --v.', { flag: 'vmodule', type: 'map', neutral: {} }),
  r('logging.options.json.splitStream', 'every line goes to stderr; leave it false.', { type: 'bool', neutral: false }),
  x('logging.options.json.infoBufferSize', 'lines are written synchronously, unbuffered.', { type: 'string', neutral: '0' }),
  r('logging.options.text.splitStream', 'every line goes to stderr; leave it false.', { type: 'bool', neutral: false }),
  x('logging.options.text.infoBufferSize', 'lines are written synchronously, unbuffered.', { type: 'string', neutral: '0' }),
  h('enableSystemLogHandler', '/logs/ is served only when true.'),
  r('enableSystemLogQuery', 'node log queries are not built; /logs/ serves files only.', { type: 'bool', neutral: false }),
  r('shutdownGracePeriod', 'graceful node shutdown is not built: pods keep running when the node shuts down (docs/operations.md).'),
  r('shutdownGracePeriodCriticalPods', 'graceful node shutdown is not built.'),
  r('shutdownGracePeriodByPodPriority', 'graceful node shutdown is not built.', { type: 'objects', neutral: [] }),
  r('crashLoopBackOff.maxContainerRestartPeriod', "the restart back-off is upstream's fixed 10s doubling to 5m; leave it unset.", {
    type: 'duration',
    neutral: null,
  }),
  r('reservedMemory', 'the memory manager is not built.', { flag: 'reserved-memory', type: 'objects', neutral: [] }),
  h('enableProfilingHandler', 'The CPU and heap profiles under /debug/pprof/ (with enableDebuggingHandlers).'),
  h('enableDebugFlagsHandler', '/debug/flags/v (with enableDebuggingHandlers).'),
  r('seccompDefault', 'set seccompProfile: RuntimeDefault in the pods instead.', { flag: 'seccomp-default', type: 'bool', neutral: false }),
  x('memoryThrottlingFactor', 'memory QoS (a feature gate, off by default) is not built.', { type: 'float', neutral: 0.9 }),
  x('memoryReservationPolicy', 'memory QoS (a feature gate, off by default) is not built.', { type: 'string', neutral: 'None' }),
  h('registerWithTaints', 'Taints of the registered node.', { flag: 'register-with-taints' }),
  h('registerNode', 'Registers the node with the apiserver.', { flag: 'register-node' }),
  r('tracing', 'OpenTelemetry tracing is not built; leave it unset.', { type: 'object', neutral: null }),
  h('localStorageCapacityIsolation', 'Evicts pods over an emptyDir sizeLimit or ephemeral-storage limit (false: not checked).'),
  h('containerRuntimeEndpoint', 'The CRI runtime endpoint.', { flag: 'container-runtime-endpoint' }),
  h('imageServiceEndpoint', 'The CRI image endpoint.', { flag: 'image-service-endpoint' }),
  x('failCgroupV1', 'kubelet-ts writes pod cgroups on v1 and v2 alike.', { type: 'bool', neutral: true }),
  r('userNamespaces.idsPerPod', 'user namespaces are not built; leave it unset.', { type: 'int', neutral: 65_536 }),
];
