/**
 * Upstream kubelet flags that set no KubeletConfiguration field (the v1.20.2
 * binary's --help, deprecated ones included, plus flags added since). The
 * flags of fields are in upstream-fields.ts. Statuses as there.
 */
import type { UpstreamSetting, ValueType } from './settings-types.js';

interface Opts {
  key?: string;
  type?: ValueType;
  neutral?: unknown;
  neutrals?: readonly unknown[];
}
const entry =
  (status: UpstreamSetting['status']) =>
  (flag: string, note: string, options: Opts = {}): UpstreamSetting => ({ flag, status, note, ...options });
const h = entry('honoured');
const x = entry('explained');
const r = entry('refused');

const DOCKERSHIM = 'dockershim is not built (kubelet-ts talks CRI only); use --container-runtime-endpoint';
const DOCKERSHIM_NET = 'only dockershim used it; the CNI configuration of the runtime applies';
const CADVISOR = 'cAdvisor is not built; container stats come from the runtime (CRI)';
const KLOG_FORMAT = 'the log line format is fixed (klog text or upstream JSON, to stderr)';
const NO_CGROUPS = 'kubelet-ts creates no cgroups; place the agent with the systemd unit (Slice=, see docs/operations.md)';
const CREDENTIAL_PROVIDERS = 'credential provider plugins are not built; use imagePullSecrets';

export const UPSTREAM_FLAGS: readonly UpstreamSetting[] = [
  h('config', 'The KubeletConfiguration file.', { key: 'configFile' }),
  r('config-dir', 'drop-in configuration directories are not built; use one --config file.', { type: 'string', neutral: '' }),
  h('kubeconfig', 'The apiserver connection; without it the agent runs standalone.'),
  h('bootstrap-kubeconfig', 'TLS bootstrap of the client certificate.', { key: 'bootstrapKubeconfig' }),
  r('experimental-bootstrap-kubeconfig', 'use --bootstrap-kubeconfig.', { type: 'string', neutral: '' }),
  h('cert-dir', 'Directory of the client and self-signed serving certificates.', { key: 'certDir' }),
  h('hostname-override', 'The node name.', { key: 'hostnameOverride' }),
  h('node-ip', 'The node addresses.', { key: 'nodeIp' }),
  h('node-labels', 'Labels of the registered node.', { key: 'nodeLabels' }),
  h('root-dir', 'Directory of pod directories, volumes and certificates (no checkpoints are written).', { key: 'rootDir' }),
  r('dynamic-config-dir', 'dynamic kubelet configuration was removed upstream; use --config.', { type: 'string', neutral: '' }),
  r('lock-file', 'run one agent per node from one systemd unit instead of a lock file.', { type: 'string', neutral: '' }),
  x('exit-on-lock-contention', 'there is no lock file (see --lock-file).', { type: 'bool', neutral: false }),
  r('runtime-cgroups', `${NO_CGROUPS}.`, { type: 'string', neutral: '' }),
  x('container-runtime', 'kubelet-ts is always a remote (CRI) runtime client.', { type: 'string', neutral: 'remote' }),
  r('docker-endpoint', `${DOCKERSHIM}.`, { type: 'string', neutral: 'unix:///var/run/docker.sock' }),
  x('image-pull-progress-deadline', 'only dockershim used it.', { type: 'duration', neutral: 60_000 }),
  x('network-plugin', DOCKERSHIM_NET, { type: 'string', neutral: '' }),
  x('network-plugin-mtu', DOCKERSHIM_NET, { type: 'int', neutral: 0 }),
  x('cni-bin-dir', DOCKERSHIM_NET, { type: 'string', neutral: '/opt/cni/bin' }),
  x('cni-cache-dir', DOCKERSHIM_NET, { type: 'string', neutral: '/var/lib/cni/cache' }),
  x('cni-conf-dir', DOCKERSHIM_NET, { type: 'string', neutral: '/etc/cni/net.d' }),
  x('non-masquerade-cidr', DOCKERSHIM_NET, { type: 'string', neutral: '10.0.0.0/8' }),
  x(
    'pod-infra-container-image',
    "the runtime chooses the sandbox (pause) image (containerd's sandbox_image); image GC keeps the one the runtime reports.",
    {
      type: 'string',
      neutral: '',
    },
  ),
  r('docker-root', `${DOCKERSHIM}.`, { type: 'string', neutral: '/var/lib/docker' }),
  r('docker-tls', `${DOCKERSHIM}.`, { type: 'bool', neutral: false }),
  r('docker-tls-ca', `${DOCKERSHIM}.`, { type: 'string', neutral: 'ca.pem' }),
  r('docker-tls-cert', `${DOCKERSHIM}.`, { type: 'string', neutral: 'cert.pem' }),
  r('docker-tls-key', `${DOCKERSHIM}.`, { type: 'string', neutral: 'key.pem' }),
  x('docker', CADVISOR, { type: 'string', neutral: 'unix:///var/run/docker.sock' }),
  x('redirect-container-streaming', 'streaming is served by the runtime; it has no effect upstream either (deprecated).', {
    type: 'bool',
    neutral: false,
  }),
  x('docker-only', CADVISOR, { type: 'bool', neutral: false }),
  x('docker-env-metadata-whitelist', CADVISOR, { type: 'string', neutral: '' }),
  x('containerd', CADVISOR, { type: 'string', neutral: '/run/containerd/containerd.sock' }),
  x('containerd-namespace', CADVISOR, { type: 'string', neutral: 'k8s.io' }),
  x('application-metrics-count-limit', CADVISOR, { type: 'int', neutral: 100 }),
  x('boot-id-file', CADVISOR, { type: 'string', neutral: '/proc/sys/kernel/random/boot_id' }),
  x('machine-id-file', CADVISOR, { type: 'string', neutral: '/etc/machine-id,/var/lib/dbus/machine-id' }),
  x('container-hints', CADVISOR, { type: 'string', neutral: '/etc/cadvisor/container_hints.json' }),
  x('enable-load-reader', CADVISOR, { type: 'bool', neutral: false }),
  x('event-storage-age-limit', CADVISOR, { type: 'string', neutral: 'default=0' }),
  x('event-storage-event-limit', CADVISOR, { type: 'string', neutral: 'default=0' }),
  x('global-housekeeping-interval', CADVISOR, { type: 'duration', neutral: 60_000 }),
  x('housekeeping-interval', CADVISOR, { type: 'duration', neutral: 10_000 }),
  x('log-cadvisor-usage', CADVISOR, { type: 'bool', neutral: false }),
  x('enable-cadvisor-json-endpoints', CADVISOR, { type: 'bool', neutral: false }),
  x('storage-driver-buffer-duration', CADVISOR, { type: 'duration', neutral: 60_000 }),
  x('storage-driver-db', CADVISOR, { type: 'string', neutral: 'cadvisor' }),
  x('storage-driver-host', CADVISOR, { type: 'string', neutral: 'localhost:8086' }),
  x('storage-driver-password', CADVISOR, { type: 'string', neutral: 'root' }),
  x('storage-driver-secure', CADVISOR, { type: 'bool', neutral: false }),
  x('storage-driver-table', CADVISOR, { type: 'string', neutral: 'stats' }),
  x('storage-driver-user', CADVISOR, { type: 'string', neutral: 'root' }),
  r('azure-container-registry-config', `${CREDENTIAL_PROVIDERS}.`, { type: 'string', neutral: '' }),
  r('image-credential-provider-config', `${CREDENTIAL_PROVIDERS}.`, { type: 'string', neutral: '' }),
  r('image-credential-provider-bin-dir', `${CREDENTIAL_PROVIDERS}.`, { type: 'string', neutral: '' }),
  r('cloud-provider', 'in-tree cloud providers are not built; use --cloud-provider=external with a cloud controller manager.', {
    type: 'string',
    neutral: '',
    neutrals: ['external'],
  }),
  r('cloud-config', 'in-tree cloud providers are not built.', { type: 'string', neutral: '' }),
  x('logtostderr', 'logs always go to stderr.', { type: 'bool', neutral: true }),
  x('alsologtostderr', 'logs always go to stderr.', { type: 'bool', neutral: false }),
  r('log-dir', 'logs go to stderr; under systemd the journal keeps them (docs/operations.md).', { type: 'string', neutral: '' }),
  r('log-file', 'logs go to stderr; under systemd the journal keeps them (docs/operations.md).', { type: 'string', neutral: '' }),
  x('log-file-max-size', 'there is no log file (see --log-file).', { type: 'int', neutral: 1800 }),
  x('add-dir-header', KLOG_FORMAT, { type: 'bool', neutral: false }),
  x('skip-headers', KLOG_FORMAT, { type: 'bool', neutral: false }),
  x('skip-log-headers', KLOG_FORMAT, { type: 'bool', neutral: false }),
  x('one-output', KLOG_FORMAT, { type: 'bool', neutral: false }),
  x('log-backtrace-at', KLOG_FORMAT, { type: 'string', neutral: ':0' }),
  x('stderrthreshold', 'every line goes to stderr whatever its severity.', { type: 'int', neutral: 2 }),
  r('minimum-container-ttl-duration', 'the container garbage collection policy is fixed at the upstream defaults; leave it unset.', {
    type: 'duration',
    neutral: 0,
  }),
  r('maximum-dead-containers-per-container', 'the container garbage collection policy is fixed at the upstream defaults (1).', {
    type: 'int',
    neutral: 1,
  }),
  r('maximum-dead-containers', 'the container garbage collection policy is fixed at the upstream defaults (-1).', {
    type: 'int',
    neutral: -1,
  }),
  r(
    'master-service-namespace',
    'the master service (for KUBERNETES_SERVICE_* variables) is read from "default" only; the flag is deprecated upstream.',
    {
      type: 'string',
      neutral: 'default',
    },
  ),
  r('register-schedulable', 'use --register-with-taints=node.kubernetes.io/unschedulable:NoSchedule.', { type: 'bool', neutral: true }),
  r('keep-terminated-pod-volumes', 'volumes of terminated pods are always unmounted.', { type: 'bool', neutral: false }),
  x('really-crash-for-testing', 'an unexpected error already ends the process.', { type: 'bool', neutral: false }),
  r('chaos-chance', 'use the simulated runtime (--container-runtime-endpoint=sim) with failure injection (docs/sim.md).', {
    type: 'float',
    neutral: 0,
  }),
  r('seccomp-profile-root', 'Localhost profiles are read from <root-dir>/seccomp.', { type: 'string', neutral: '' }),
  r('experimental-mounter-path', 'mounts use the host mount binary.', { type: 'string', neutral: '' }),
  x('experimental-check-node-capabilities-before-mount', 'kubelet-ts mounts no volume types that need host tools.', {
    type: 'bool',
    neutral: false,
  }),
  x('experimental-allocatable-ignore-eviction', 'allocatable always has the hard eviction thresholds taken off (the default).', {
    type: 'bool',
    neutral: false,
  }),
  x('experimental-kernel-memcg-notification', 'memory is measured every eviction monitoring period (10 s); no memcg notifications.', {
    type: 'bool',
    neutral: false,
  }),
];
