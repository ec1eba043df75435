/**
 * A pod's persistentVolumeClaim volumes resolved to their bound
 * PersistentVolumes through the apiserver (upstream desired state of world
 * populator: createVolumeSpec, getPVCExtractPV, getPVSpec).
 *
 * Contracts:
 *  - Each resolution reads the claim and then the volume from the apiserver
 *    (no cache, as upstream: a sync sees the binding as it is now).
 *  - A claim that is missing, being deleted, not bound, or bound to a volume
 *    that does not point back to it yields upstream's message
 *    ("error processing PVC ns/name: PVC is not bound"); the caller fails
 *    the pod's mount wait with it and the pod worker retries with backoff.
 *  - The result carries the read-only flag of the claim source (upstream
 *    NewSpecFromPersistentVolume(pv, pvcSource.ReadOnly)).
 */
import type { PersistentVolume, PersistentVolumeClaim, Volume } from '../../api/core-v1.js';
import type { Pod } from '../../api/pod.js';
import { ApiStatusError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { RestClient } from '../apiserver/rest-client.js';

/** A pod volume backed by a PersistentVolume (upstream volume.Spec with PersistentVolume set). */
export interface PersistentSpec {
  pv: PersistentVolume;
  /** The claim source's readOnly (the pod's volumeMount.readOnly is applied by the container mounts). */
  readOnly: boolean;
  /** namespace/claimName, for messages. */
  claim: string;
  /** The PV's pv.beta.kubernetes.io/gid annotation: a supplemental group of the pod's containers (upstream volumeGidValue). */
  gid?: string;
}

/** upstream volutil.VolumeGidAnnotationKey. */
export const VOLUME_GID_ANNOTATION = 'pv.beta.kubernetes.io/gid';

/** Reads claims and volumes (the seam: a fake in tests, the apiserver in the agent). */
export interface ClaimSource {
  getClaim(namespace: string, name: string): Promise<PersistentVolumeClaim>;
  getVolume(name: string): Promise<PersistentVolume>;
}

/** The Status message of an apiserver error (`persistentvolumeclaims "x" not found`), else the error's message. */
function apiMessage(err: unknown): string {
  if (err instanceof ApiStatusError) return err.message.replace(/^[A-Z]+ \S+: \d+(?: [A-Za-z]+)?: /, '');
  return errorMessage(err);
}

/** A ClaimSource over the agent's apiserver client (plain GETs; the Node authorizer allows those of the node's pods). */
export function apiClaimSource(client: Pick<RestClient, 'get'>): ClaimSource {
  return {
    getClaim: (ns, name) =>
      client.get<PersistentVolumeClaim>(`/api/v1/namespaces/${encodeURIComponent(ns)}/persistentvolumeclaims/${encodeURIComponent(name)}`),
    getVolume: (name) => client.get<PersistentVolume>(`/api/v1/persistentvolumes/${encodeURIComponent(name)}`),
  };
}

/** Upstream getPVCExtractPV: the claim, which must be bound and not being deleted. */
async function boundClaim(src: ClaimSource, namespace: string, name: string): Promise<PersistentVolumeClaim> {
  let pvc: PersistentVolumeClaim;
  try {
    pvc = await src.getClaim(namespace, name);
  } catch (err) {
    throw new Error(`failed to fetch PVC from API server: ${apiMessage(err)}`, { cause: err });
  }
  // StorageObjectInUseProtection (on by default): a pod must not start on a claim being deleted.
  if (pvc.metadata?.deletionTimestamp) throw new Error('PVC is being deleted');
  if (pvc.status?.phase !== 'Bound') throw new Error('PVC is not bound');
  if (!pvc.spec?.volumeName) throw new Error('PVC has empty pvc.Spec.VolumeName');
  return pvc;
}

/** Upstream getPVSpec: the volume, which must be bound to the claim with `claimUid`. */
async function boundVolume(src: ClaimSource, name: string, claimUid: string): Promise<PersistentVolume> {
  let pv: PersistentVolume;
  try {
    pv = await src.getVolume(name);
  } catch (err) {
    throw new Error(`failed to fetch PV ${name} from API server: ${apiMessage(err)}`, { cause: err });
  }
  const ref = pv.spec?.claimRef;
  if (!ref) throw new Error(`found PV object ${name} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`);
  if ((ref.uid ?? '') !== claimUid) {
    throw new Error(`found PV object ${name} but its pv.Spec.ClaimRef.UID ${ref.uid ?? ''} does not point to claim.UID ${claimUid}`);
  }
  return pv;
}

/**
 * Resolves one persistentVolumeClaim volume of `pod` (upstream createVolumeSpec),
 * rejecting with upstream's message. Only filesystem volumes can be mounted.
 */
export async function resolveClaim(src: ClaimSource, pod: Pod, volume: Volume): Promise<PersistentSpec> {
  const source = volume.persistentVolumeClaim!;
  const ns = pod.metadata.namespace ?? '';
  const claim = `${ns}/${source.claimName}`;
  let pv: PersistentVolume;
  try {
    const pvc = await boundClaim(src, ns, source.claimName);
    pv = await boundVolume(src, pvc.spec!.volumeName!, pvc.metadata?.uid ?? '');
  } catch (err) {
    throw new Error(`error processing PVC ${claim}: ${errorMessage(err)}`, { cause: err });
  }
  const mode = pv.spec?.volumeMode ?? 'Filesystem';
  if (mode !== 'Filesystem') throw new Error(`volume ${volume.name} has volumeMode ${mode}, but is specified in volumeMounts`);
  const gid = pv.metadata?.annotations?.[VOLUME_GID_ANNOTATION];
  return { pv, readOnly: source.readOnly === true, claim, ...(gid ? { gid } : {}) };
}
