/**
 * downwardAPI volumes (upstream pkg/volume/downwardapi): the pod's own
 * metadata (fieldRef) and its containers' resource limits and requests
 * (resourceFieldRef) as files, written with the atomic writer on a tmpfs and
 * rewritten on every pod sync, so label and annotation changes reach the
 * files. Works without an apiserver (static pods).
 */
import type { Volume } from '../../api/core-v1.js';
import type { Container, Pod } from '../../api/pod.js';
import { VolumeError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { fieldRefValue, resourceFieldValue } from '../../pod/env-values.js';
import type { Payload } from './atomic-writer.js';
import type { VolumeHost, VolumePlugin } from './volume-plugin.js';
import { DEFAULT_VOLUME_MODE, setUpWrappedVolume, tearDownWrappedVolume, throwIfErrors } from './wrapped-volume.js';

export const DOWNWARD_API_PLUGIN = 'kubernetes.io/downward-api';

/** fieldRef paths a downwardAPI volume may use (upstream validDownwardAPIFieldPathExpressions for volumes). */
export const VOLUME_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'];

type DownwardItems = NonNullable<NonNullable<Volume['downwardAPI']>['items']>;

function isVolumeFieldPath(path: string): boolean {
  return VOLUME_FIELD_PATHS.includes(path) || /^metadata\.(labels|annotations)\['.+'\]$/.test(path);
}

/**
 * Upstream CollectData: one file per item, mode from the item or the volume's
 * defaultMode. All item errors are reported together.
 */
export function collectDownwardAPIData(
  pod: Pod,
  items: DownwardItems,
  defaultMode: number,
  host: Pick<VolumeHost, 'nodeAllocatable'>,
): Payload {
  const payload: Payload = new Map();
  const errors: string[] = [];
  for (const item of items) {
    const mode = item.mode ?? defaultMode;
    let data = '';
    try {
      if (item.fieldRef) {
        const path = item.fieldRef.fieldPath;
        const v = isVolumeFieldPath(path) ? fieldRefValue(pod, path, { nodeName: '', podIP: '', podIPs: [] }) : undefined;
        if (v === undefined) throw new VolumeError(`unsupported fieldPath: ${path}`);
        data = v;
      } else if (item.resourceFieldRef) {
        const ref = item.resourceFieldRef;
        const all: Container[] = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])];
        const target = all.find((c) => c.name === ref.containerName);
        if (!target) throw new VolumeError(`container ${JSON.stringify(ref.containerName ?? '')} not found`);
        data = resourceFieldValue(pod, target, { ...ref, divisor: ref.divisor }, { nodeAllocatable: host.nodeAllocatable });
      }
    } catch (err) {
      errors.push(errorMessage(err));
      continue;
    }
    payload.set(item.path, { data: Buffer.from(data, 'utf8'), mode });
  }
  throwIfErrors(errors);
  return payload;
}

export const downwardAPIPlugin: VolumePlugin = {
  name: DOWNWARD_API_PLUGIN,
  requiresRemount: true,
  canSupport: (v) => v.downwardAPI !== undefined,
  async setUp(pod, v, host) {
    const src = v.downwardAPI ?? {};
    const payload = collectDownwardAPIData(pod, src.items ?? [], src.defaultMode ?? DEFAULT_VOLUME_MODE, host);
    return setUpWrappedVolume(pod, v, host, DOWNWARD_API_PLUGIN, 'Memory', payload);
  },
  tearDown: (uid, name, host) => tearDownWrappedVolume(uid, name, host, DOWNWARD_API_PLUGIN),
};
