/**
 * Feature gates as upstream's component-base featuregate parses them
 * (`--feature-gates=A=true,B=false`, KubeletConfiguration `featureGates`):
 * comma-separated key=value pairs, values in Go ParseBool form; an unknown
 * gate is an error, as is a locked (GA or deprecated) gate set against its
 * locked value. The known gates are those of the kubelet v1.20.2 binary the
 * project compares against (pkg/features plus the apiserver and
 * component-base gates it registers), with their defaults.
 *
 * kubelet-ts reads no gate: a gate set to a value other than its default is
 * accepted and named in one startup line (see settings-catalog.ts).
 */
import { parseBool } from './parse-values.js';

type Stage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';
/** name → [default, stage, lockedToDefault?] */
const GATES: Readonly<Record<string, readonly [boolean, Stage, true?]>> = {
  APIListChunking: [true, 'BETA'],
  APIPriorityAndFairness: [true, 'BETA'],
  APIResponseCompression: [true, 'BETA'],
  AdvancedAuditing: [true, 'GA'],
  AllAlpha: [false, 'ALPHA'],
  AllBeta: [false, 'BETA'],
  AllowInsecureBackendProxy: [true, 'BETA'],
  AnyVolumeDataSource: [false, 'ALPHA'],
  AppArmor: [true, 'BETA'],
  AttachVolumeLimit: [true, 'GA', true],
  BalanceAttachedNodeVolumes: [false, 'ALPHA'],
  BlockVolume: [true, 'GA', true],
  BoundServiceAccountTokenVolume: [false, 'ALPHA'],
  CPUManager: [true, 'BETA'],
  CRIContainerLogRotation: [true, 'BETA'],
  CSIBlockVolume: [true, 'GA', true],
  CSIDriverRegistry: [true, 'GA', true],
  CSIInlineVolume: [true, 'BETA'],
  CSIMigration: [true, 'BETA'],
  CSIMigrationAWS: [false, 'BETA'],
  CSIMigrationAWSComplete: [false, 'ALPHA'],
  CSIMigrationAzureDisk: [false, 'BETA'],
  CSIMigrationAzureDiskComplete: [false, 'ALPHA'],
  CSIMigrationAzureFile: [false, 'ALPHA'],
  CSIMigrationAzureFileComplete: [false, 'ALPHA'],
  CSIMigrationGCE: [false, 'BETA'],
  CSIMigrationGCEComplete: [false, 'ALPHA'],
  CSIMigrationOpenStack: [false, 'BETA'],
  CSIMigrationOpenStackComplete: [false, 'ALPHA'],
  CSIMigrationvSphere: [false, 'BETA'],
  CSIMigrationvSphereComplete: [false, 'BETA'],
  CSINodeInfo: [true, 'GA', true],
  CSIServiceAccountToken: [false, 'ALPHA'],
  CSIStorageCapacity: [false, 'ALPHA'],
  CSIVolumeFSGroupPolicy: [true, 'BETA'],
  ConfigurableFSGroupPolicy: [true, 'BETA'],
  CronJobControllerV2: [false, 'ALPHA'],
  CustomCPUCFSQuotaPeriod: [false, 'ALPHA'],
  DefaultPodTopologySpread: [true, 'BETA'],
  DevicePlugins: [true, 'BETA'],
  DisableAcceleratorUsageMetrics: [true, 'BETA'],
  DownwardAPIHugePages: [false, 'ALPHA'],
  DryRun: [true, 'GA'],
  DynamicKubeletConfig: [true, 'BETA'],
  EndpointSlice: [true, 'BETA'],
  EndpointSliceNodeName: [false, 'ALPHA'],
  EndpointSliceProxying: [true, 'BETA'],
  EndpointSliceTerminatingCondition: [false, 'ALPHA'],
  EphemeralContainers: [false, 'ALPHA'],
  EvenPodsSpread: [true, 'GA', true],
  ExecProbeTimeout: [true, 'GA'],
  ExpandCSIVolumes: [true, 'BETA'],
  ExpandInUsePersistentVolumes: [true, 'BETA'],
  ExpandPersistentVolumes: [true, 'BETA'],
  ExperimentalHostUserNamespaceDefaulting: [false, 'BETA'],
  ExternalPolicyForExternalIP: [true, 'GA', true],
  GenericEphemeralVolume: [false, 'ALPHA'],
  GracefulNodeShutdown: [false, 'ALPHA'],
  HPAContainerMetrics: [false, 'ALPHA'],
  HPAScaleToZero: [false, 'ALPHA'],
  HugePageStorageMediumSize: [true, 'BETA'],
  HyperVContainer: [false, 'DEPRECATED'],
  IPv6DualStack: [false, 'ALPHA'],
  ImmutableEphemeralVolumes: [true, 'BETA'],
  KubeletCredentialProviders: [false, 'ALPHA'],
  KubeletPodResources: [true, 'BETA'],
  LegacyNodeRoleBehavior: [true, 'BETA'],
  LocalStorageCapacityIsolation: [true, 'BETA'],
  LocalStorageCapacityIsolationFSQuotaMonitoring: [false, 'ALPHA'],
  MixedProtocolLBService: [false, 'ALPHA'],
  NodeDisruptionExclusion: [true, 'BETA'],
  NodeLease: [true, 'GA', true],
  NonPreemptingPriority: [true, 'BETA'],
  PodDisruptionBudget: [true, 'BETA'],
  PodOverhead: [true, 'BETA'],
  ProcMountType: [false, 'ALPHA'],
  QOSReserved: [false, 'ALPHA'],
  RootCAConfigMap: [true, 'BETA'],
  RotateKubeletClientCertificate: [true, 'GA', true],
  RotateKubeletServerCertificate: [true, 'BETA'],
  RunAsGroup: [true, 'BETA'],
  RuntimeClass: [true, 'GA', true],
  SCTPSupport: [true, 'GA', true],
  ServerSideApply: [true, 'BETA'],
  ServiceAccountIssuerDiscovery: [true, 'BETA'],
  ServiceAppProtocol: [true, 'GA', true],
  ServiceLBNodePortControl: [false, 'ALPHA'],
  ServiceNodeExclusion: [true, 'BETA'],
  ServiceTopology: [false, 'ALPHA'],
  SetHostnameAsFQDN: [true, 'BETA'],
  SizeMemoryBackedVolumes: [false, 'ALPHA'],
  StartupProbe: [true, 'GA', true],
  StorageObjectInUseProtection: [true, 'GA'],
  StreamingProxyRedirects: [true, 'DEPRECATED'],
  SupportNodePidsLimit: [true, 'GA', true],
  SupportPodPidsLimit: [true, 'GA', true],
  Sysctls: [true, 'BETA'],
  TTLAfterFinished: [false, 'ALPHA'],
  TokenRequest: [true, 'GA', true],
  TokenRequestProjection: [true, 'GA', true],
  TopologyManager: [true, 'BETA'],
  ValidateProxyRedirects: [true, 'BETA'],
  VolumePVCDataSource: [true, 'GA', true],
  VolumeSnapshotDataSource: [true, 'GA', true],
  VolumeSubpath: [true, 'GA'],
  WarningHeaders: [true, 'BETA'],
  WinDSR: [false, 'ALPHA'],
  WinOverlay: [true, 'BETA'],
  WindowsEndpointSliceProxying: [false, 'ALPHA'],
  WindowsGMSA: [true, 'GA', true],
  WindowsRunAsUserName: [true, 'GA', true],
};

export interface FeatureGateInfo {
  default: boolean;
  stage: Stage;
  locked: boolean;
}

export function featureGate(name: string): FeatureGateInfo | undefined {
  const g = Object.hasOwn(GATES, name) ? GATES[name] : undefined;
  return g && { default: g[0], stage: g[1], locked: g[2] === true };
}

/** Upstream featureGate.Set's syntax: "A=true,B=false" merged into `into`. Throws on a malformed pair. */
export function parseFeatureGates(value: string, into: Record<string, boolean> = {}): Record<string, boolean> {
  for (const part of value.split(',')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (eq < 0) throw new Error(`missing bool value for ${key}`);
    const v = part.slice(eq + 1).trim();
    try {
      into[key] = parseBool(v);
    } catch {
      throw new Error(`invalid value of ${key}=${v}: use true or false`);
    }
  }
  return into;
}

/** Upstream SetFromMap's checks, every problem reported: unknown gates and locked gates set against their value. */
export function featureGateProblems(gates: Readonly<Record<string, boolean>>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(gates)) {
    const g = featureGate(name);
    if (!g) out.push(`unrecognized feature gate: ${name}`);
    else if (g.locked && g.default !== value) out.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${g.default}`);
  }
  return out;
}

/** The gates set to a value other than their default (the ones worth a startup line). */
export function changedFeatureGates(gates: Readonly<Record<string, boolean>>): string[] {
  return Object.entries(gates)
    .filter(([name, value]) => featureGate(name)?.default !== value)
    .map(([name, value]) => `${name}=${value}`);
}
