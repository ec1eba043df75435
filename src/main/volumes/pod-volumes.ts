/**
 * What a pod asks of the volume manager: the volumes its containers mount
 * (upstream GetPodVolumeNames: only mounted volumes are set up) and the
 * plugin for each. Pure.
 */
import type { Pod, Volume } from '../../api/core-v1.js';
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

export const SUPPORTED_SOURCES = 'emptyDir, hostPath, configMap, secret, downwardAPI and projected';

/** The plugin for a volume, or the message for a pod whose volume no plugin supports. */
export function findPlugin(plugins: readonly VolumePlugin[], v: Volume): VolumePlugin | string {
  const found = plugins.filter((p) => p.canSupport(v));
  if (found.length === 1) return found[0];
  if (found.length > 1) return `volume ${JSON.stringify(v.name)} has more than one source; exactly one is allowed`;
  return `volume ${JSON.stringify(v.name)}: ${volumeSourceName(v)} volumes are not supported by kubelet-ts (it supports ${SUPPORTED_SOURCES})`;
}
