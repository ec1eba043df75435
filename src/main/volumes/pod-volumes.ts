/**
 * What a pod asks of the volume manager: the volumes its containers mount
 * (upstream GetPodVolumeNames: only mounted volumes are set up) and the
 * plugin for each. Pure.
 */
import type { PersistentVolume, Pod, Volume } from '../../api/core-v1.js';
import type { VolumePlugin } from './volume-plugin.js';

/** Names of the volumes any container (init, regular, ephemeral) mounts. */
export function mountedVolumeNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  const ephemeral = (pod.spec['ephemeralContainers'] as { volumeMounts?: { name: string }[] }[] | undefined) ?? [];
  for (const c of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? []), ...ephemeral]) {
    for (const m of c.volumeMounts ?? []) names.add(m.name);
  }
  return names;
}

/** The source field of a volume ("emptyDir", "persistentVolumeClaim", ...), for messages. */
export function volumeSourceName(v: Volume): string {
  return Object.keys(v).find((k) => k !== 'name') ?? 'none';
}

export const SUPPORTED_SOURCES =
  'emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim (local, hostPath and CSI PersistentVolumes)';

/** PersistentVolumeSpec fields that are not its source. */
const PV_NON_SOURCE = new Set([
  'accessModes',
  'capacity',
  'claimRef',
  'mountOptions',
  'nodeAffinity',
  'persistentVolumeReclaimPolicy',
  'storageClassName',
  'volumeMode',
]);

/** The source field of a PersistentVolume ("local", "csi", ...), for messages. */
export function persistentSourceName(pv: PersistentVolume): string {
  return Object.keys(pv.spec ?? {}).find((k) => !PV_NON_SOURCE.has(k)) ?? 'none';
}

/**
 * The plugin for a volume (for a persistentVolumeClaim volume, for the PV
 * bound to its claim), or the message for a volume no plugin supports.
 */
export function findPlugin(plugins: readonly VolumePlugin[], v: Volume, pv?: PersistentVolume): VolumePlugin | string {
  if (pv) {
    const found = plugins.filter((p) => p.canSupportPersistent?.(pv));
    if (found.length === 1) return found[0];
    return `volume ${JSON.stringify(v.name)}: PersistentVolume ${JSON.stringify(pv.metadata?.name ?? '')} is a ${persistentSourceName(pv)} volume, which kubelet-ts does not support (it supports local, hostPath and CSI PersistentVolumes)`;
  }
  const found = plugins.filter((p) => p.canSupport(v));
  if (found.length === 1) return found[0];
  if (found.length > 1) return `volume ${JSON.stringify(v.name)} has more than one source; exactly one is allowed`;
  return `volume ${JSON.stringify(v.name)}: ${volumeSourceName(v)} volumes are not supported by kubelet-ts (it supports ${SUPPORTED_SOURCES})`;
}
