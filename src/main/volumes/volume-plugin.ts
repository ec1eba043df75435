/**
 * The contract of a volume plugin (upstream pkg/volume VolumePlugin, Mounter,
 * Unmounter), reduced to what a node without storage plugins needs, and the
 * host services plugins use (upstream VolumeHost).
 *
 * Contracts:
 *  - setUp is idempotent: after an agent restart it runs again over what the
 *    previous process left and must neither mount twice nor lose data.
 *  - tearDown knows only the pod UID and the volume name (after a restart
 *    the spec may be gone) and is idempotent too.
 *  - The volume manager runs at most one setUp/tearDown per volume at a time.
 *  - Plugins do their I/O asynchronously (fs/promises, child processes).
 */
import type { Logger } from 'pino';
import type { ConfigMap, PersistentVolume, Secret, TokenRequest, Volume } from '../../api/core-v1.js';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { Mounter } from '../../common/mounter.js';
import type { PodVolume } from '../../pod/sync-types.js';
import type { EventRecorder } from '../events/event-recorder.js';
import type { ClaimSource, PersistentSpec } from './claim-resolver.js';

/** What a container mount needs of a set-up volume (upstream VolumeInfo: the mounter's path and read-only attribute). */
export type MountedVolume = PodVolume;

export type ObjectKind = 'configmap' | 'secret';

export interface ObjectRef {
  kind: ObjectKind;
  namespace: string;
  name: string;
}

/**
 * ConfigMaps and Secrets the node may read (upstream configmap/secret
 * managers). A pod's objects are registered while it has volumes, so the
 * source can keep them current (a watch per object).
 */
export interface ObjectSource {
  register(ref: ObjectRef): void;
  unregister(ref: ObjectRef): void;
  /** Calls `listener` whenever a registered object changes after its first listing (created, updated or deleted). */
  onChange(listener: (ref: ObjectRef) => void): void;
  /** The current object; rejects with an ApiStatusError 404 (`configmap "x" not found`) when it does not exist. */
  get(ref: ObjectRef & { kind: 'configmap' }): Promise<ConfigMap>;
  get(ref: ObjectRef & { kind: 'secret' }): Promise<Secret>;
}

/** The spec of a service-account token request (authentication.k8s.io/v1 TokenRequestSpec). */
export interface TokenSpec {
  audiences: string[];
  expirationSeconds: number;
  boundObjectRef: { apiVersion: 'v1'; kind: 'Pod'; name: string; uid: string };
}

/** Service-account tokens from the TokenRequest API, cached and refreshed (upstream token.Manager). */
export interface TokenSource {
  getServiceAccountToken(namespace: string, serviceAccount: string, spec: TokenSpec): Promise<TokenRequest>;
  /** Forgets the tokens bound to a pod (its volumes are gone). */
  deletePodTokens(podUid: string): void;
}

/** Services a plugin may use (upstream VolumeHost). */
export interface VolumeHost {
  rootDir: string;
  mounter: Mounter;
  clock: Clock;
  logger: Logger;
  /** Node allocatable cpu and memory (downward API limits, memory-backed volume sizes). */
  nodeAllocatable: { cpu: string; memory: string };
  /** undefined when the agent runs standalone (no --kubeconfig). */
  objects?: ObjectSource;
  tokens?: TokenSource;
  /** PersistentVolumeClaims and PersistentVolumes (cluster mode only). */
  claims?: ClaimSource;
  /** Events a plugin records on a pod (e.g. the local plugin's AlreadyMountedVolume warning). */
  recorder?: EventRecorder;
}

export interface VolumePlugin {
  /** Upstream plugin name, e.g. "kubernetes.io/empty-dir": the directory under volumes/ and the metric label. */
  readonly name: string;
  /** Set up again on every pod sync, so contents follow their sources (upstream RequiresRemount). */
  readonly requiresRemount: boolean;
  canSupport(volume: Volume): boolean;
  /** Supports a PersistentVolume of this source (upstream CanSupport of a PV spec); a plugin of PVs implements it. */
  canSupportPersistent?(pv: PersistentVolume): boolean;
  /**
   * Its volume directory is named after the PersistentVolume, not the pod's
   * volume (upstream spec.Name() of a PV spec): after a restart the directory
   * name is a PV name, which a pod's claim claims again.
   */
  readonly dirNamedByPV?: boolean;
  /**
   * A problem that retrying cannot fix (e.g. an apiserver the agent does not
   * have): the pod fails to mount at once with this message.
   */
  check?(pod: Pod, volume: Volume, host: VolumeHost): string | undefined;
  /**
   * For a PersistentVolume of an attachable plugin (upstream AttachableVolumePlugin
   * whose CanAttach holds), its unique volume name, which the node reports in
   * status.volumesInUse; undefined when the volume needs no attach.
   */
  attachableName?(persistent: PersistentSpec): Promise<string | undefined>;
  /** The API objects the volume reads, registered with the ObjectSource while the pod has the volume. */
  references?(pod: Pod, volume: Volume): ObjectRef[];
  /** `persistent`: the PV bound to the claim of a persistentVolumeClaim volume. */
  setUp(pod: Pod, volume: Volume, host: VolumeHost, persistent?: PersistentSpec): Promise<MountedVolume>;
  /** `dirName`: the volume's directory name (the pod's volume name, or the PV name for `dirNamedByPV` plugins). */
  tearDown(podUid: string, dirName: string, host: VolumeHost): Promise<void>;
}
