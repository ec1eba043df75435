/**
 * The built-in KubeletConfig: upstream's SetDefaults_KubeletConfiguration
 * (pkg/kubelet/apis/config/v1beta1/defaults.go) plus the defaults of the
 * flag-only settings and of kubelet-ts's own settings (worker threads, relist
 * mode, PLEG). Flags and a config file are applied over it by load-config.ts.
 */
import { DEFAULT_EVICTION_HARD, LEGACY_READ_ONLY_PORT, type KubeletConfig } from './kubelet-config.js';
import { defaultServerConfig } from './server-config.js';

export interface DefaultsContext {
  /** Upstream: readOnlyPort is 10255 without --config, 0 with it; so differ the authn/authz defaults. */
  withConfigFile: boolean;
  availableParallelism: number;
  hostname: string;
}

/** Pods one pool worker serves by default (see defaultWorkerThreads). */
const PODS_PER_WORKER = 300;

/** Upstream's default maxPods. */
const DEFAULT_MAX_PODS = 110;
/**
 * kubelet-ts only (upstream admits any number): a bound on one pod's containers, so one
 * manifest cannot make the node start thousands of processes. 250 is far above
 * what pods use and admits the 200-container pod of test/integration/large-pod.
 */
export const DEFAULT_MAX_CONTAINERS_PER_POD = 250;

/**
 * Default worker-thread count: one per PODS_PER_WORKER of maxPods, at most
 * min(4, available parallelism), at least one. A worker is an isolate with
 * its own gRPC channel and module graph (~15-30 MiB resident once idle), and
 * one worker keeps up with the relist and pod syncs of 300 pods (`npm run bench
 * -- memory` and `-- peer`), so a node with upstream's default maxPods (110)
 * runs one.
 */
export function defaultWorkerThreads(availableParallelism: number, maxPods: number): number {
  const byPods = Math.ceil(Math.max(1, maxPods) / PODS_PER_WORKER);
  return Math.max(1, Math.min(4, Math.floor(availableParallelism), byPods));
}

/** The built-in defaults (upstream SetDefaults_KubeletConfiguration plus our flag-only settings). */
export function defaultKubeletConfig(ctx: DefaultsContext): KubeletConfig {
  const endpoint = 'unix:///run/containerd/containerd.sock';
  return {
    enableServer: true,
    staticPodPath: '',
    staticPodURL: '',
    staticPodURLHeader: {},
    syncFrequency: 60_000,
    fileCheckFrequency: 20_000,
    httpCheckFrequency: 20_000,
    podHousekeepingPeriod: 2_000,
    address: '0.0.0.0',
    port: 10250,
    readOnlyPort: ctx.withConfigFile ? 0 : LEGACY_READ_ONLY_PORT,
    healthzPort: 10248,
    healthzBindAddress: '127.0.0.1',
    maxPods: DEFAULT_MAX_PODS,
    podsPerCore: 0,
    podPidsLimit: -1,
    podCIDR: '',
    providerID: '',
    runtimeRequestTimeout: 120_000,
    containerRuntimeEndpoint: endpoint,
    imageServiceEndpoint: endpoint,
    podLogsDir: '/var/log/pods',
    registerNode: true,
    registerWithTaints: [],
    nodeStatusUpdateFrequency: 10_000,
    nodeStatusReportFrequency: 300_000,
    nodeStatusMaxImages: 50,
    nodeLeaseDurationSeconds: 40,
    imageMinimumGCAge: 120_000,
    imageMaximumGCAge: 0,
    imageGCHighThresholdPercent: 85,
    imageGCLowThresholdPercent: 80,
    serializeImagePulls: true,
    maxParallelImagePulls: null,
    registryPullQPS: 5,
    registryBurst: 10,
    evictionHard: { ...DEFAULT_EVICTION_HARD },
    evictionSoft: {},
    evictionSoftGracePeriod: {},
    evictionMinimumReclaim: {},
    evictionPressureTransitionPeriod: 300_000,
    evictionMaxPodGracePeriod: 0,
    mergeDefaultEvictionSettings: false,
    systemReserved: {},
    kubeReserved: {},
    enforceNodeAllocatable: ['pods'],
    cgroupDriver: 'cgroupfs',
    cgroupRoot: '',
    cgroupsPerQOS: true,
    failSwapOn: true,
    localStorageCapacityIsolation: true,
    oomScoreAdj: -999,
    clusterDNS: [],
    clusterDomain: '',
    resolvConf: '/etc/resolv.conf',
    hairpinMode: 'promiscuous-bridge',
    kubeAPIQPS: 50,
    kubeAPIBurst: 100,
    eventRecordQPS: 50,
    eventBurst: 100,
    containerLogMaxSize: '10Mi',
    containerLogMaxFiles: 5,
    containerLogMaxWorkers: 1,
    containerLogMonitorInterval: 10_000,
    shutdownGracePeriod: 0,
    shutdownGracePeriodCriticalPods: 0,
    featureGates: {},
    enableDebuggingHandlers: true,
    enableSystemLogHandler: true,
    enableProfilingHandler: true,
    enableDebugFlagsHandler: true,
    otherSettings: {},
    logging: { format: 'text', verbosity: 0 },
    ...defaultServerConfig(ctx.withConfigFile),

    configFile: '',
    kubeconfig: '',
    bootstrapKubeconfig: '',
    certDir: '',
    rootDir: '/var/lib/kubelet',
    containerLogsDir: '/var/log/containers',
    hostnameOverride: '',
    nodeName: ctx.hostname.trim().toLowerCase(),
    nodeIp: '',
    nodeLabels: {},
    runonce: false,
    workerThreads: defaultWorkerThreads(ctx.availableParallelism, DEFAULT_MAX_PODS),
    relistMode: 'parallel',
    pleg: 'generic',
    imageGcPeriod: 300_000,
    maxContainersPerPod: DEFAULT_MAX_CONTAINERS_PER_POD,
  };
}
