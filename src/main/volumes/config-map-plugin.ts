/**
 * configMap volumes (upstream pkg/volume/configmap): the keys of a ConfigMap
 * (data and binaryData, or the listed `items`) as files, written with the
 * atomic writer into a directory on the node's disk and rewritten on every
 * pod sync, so updates reach running pods. `optional` tolerates a missing
 * ConfigMap or key. Needs the apiserver.
 */
import type { ApiVolume, ConfigMap } from '../../api/cluster.js';
import { VolumeError } from '../../common/errors.js';
import { isNotFound } from '../apiserver/rest-client.js';
import type { Payload } from './atomic-writer.js';
import type { VolumePlugin } from './volume-plugin.js';
import { DEFAULT_VOLUME_MODE, setUpWrappedVolume, tearDownWrappedVolume } from './wrapped-volume.js';

export const CONFIG_MAP_PLUGIN = 'kubernetes.io/configmap';

export const NEEDS_APISERVER = 'kubelet-ts runs standalone (no --kubeconfig), so there is no apiserver to read it from';

type KeyToPath = NonNullable<NonNullable<ApiVolume['configMap']>['items']>;

/** Upstream configmap.MakePayload. */
export function configMapPayload(items: KeyToPath | undefined, cm: ConfigMap, defaultMode: number, optional: boolean): Payload {
  const payload: Payload = new Map();
  const data = cm.data ?? {};
  const binary = cm.binaryData ?? {};
  const value = (key: string): Buffer | undefined =>
    key in data ? Buffer.from(data[key]!, 'utf8') : key in binary ? Buffer.from(binary[key]!, 'base64') : undefined;
  if (!items || items.length === 0) {
    for (const key of [...Object.keys(data), ...Object.keys(binary)]) payload.set(key, { data: value(key)!, mode: defaultMode });
    return payload;
  }
  for (const item of items) {
    const content = value(item.key);
    if (content === undefined) {
      if (optional) continue;
      throw new VolumeError(`configmap references non-existent config key: ${item.key}`);
    }
    payload.set(item.path, { data: content, mode: item.mode ?? defaultMode });
  }
  return payload;
}

/** A missing optional object reads as an empty one (upstream). */
export async function getOptional<T>(get: () => Promise<T>, optional: boolean, empty: T): Promise<T> {
  try {
    return await get();
  } catch (err) {
    if (optional && isNotFound(err)) return empty;
    throw err;
  }
}

export const configMapPlugin: VolumePlugin = {
  name: CONFIG_MAP_PLUGIN,
  requiresRemount: true,
  canSupport: (v) => v.configMap !== undefined,
  check: (_pod, _v, host) => (host.objects ? undefined : `configMap volumes need the apiserver: ${NEEDS_APISERVER}`),
  references: (pod, v) => [{ kind: 'configmap', namespace: pod.metadata.namespace ?? '', name: v.configMap?.name ?? '' }],
  async setUp(pod, v, host) {
    const src = v.configMap ?? {};
    const namespace = pod.metadata.namespace ?? '';
    const name = src.name ?? '';
    const optional = src.optional === true;
    const cm = await getOptional(() => host.objects!.get({ kind: 'configmap', namespace, name }), optional, {
      metadata: { namespace, name },
    });
    const payload = configMapPayload(src.items, cm, src.defaultMode ?? DEFAULT_VOLUME_MODE, optional);
    return setUpWrappedVolume(pod, v, host, CONFIG_MAP_PLUGIN, '', payload);
  },
  tearDown: (uid, name, host) => tearDownWrappedVolume(uid, name, host, CONFIG_MAP_PLUGIN),
};
