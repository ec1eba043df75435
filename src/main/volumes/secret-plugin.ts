/**
 * secret volumes (upstream pkg/volume/secret): the keys of a Secret as files,
 * on a tmpfs (never on the node's disk), written with the atomic writer and
 * rewritten on every pod sync. `optional` tolerates a missing Secret or key.
 * Needs the apiserver.
 */
import type { ApiVolume, Secret } from '../../api/cluster.js';
import { VolumeError } from '../../common/errors.js';
import type { Payload } from './atomic-writer.js';
import { getOptional, NEEDS_APISERVER } from './config-map-plugin.js';
import type { VolumePlugin } from './volume-plugin.js';
import { DEFAULT_VOLUME_MODE, setUpWrappedVolume, tearDownWrappedVolume } from './wrapped-volume.js';

export const SECRET_PLUGIN = 'kubernetes.io/secret';

type KeyToPath = NonNullable<NonNullable<ApiVolume['secret']>['items']>;

/** Upstream secret.MakePayload (data values are base64 on the wire). */
export function secretPayload(items: KeyToPath | undefined, secret: Secret, defaultMode: number, optional: boolean): Payload {
  const payload: Payload = new Map();
  const data = secret.data ?? {};
  if (!items || items.length === 0) {
    for (const [key, b64] of Object.entries(data)) payload.set(key, { data: Buffer.from(b64, 'base64'), mode: defaultMode });
    return payload;
  }
  for (const item of items) {
    const b64 = data[item.key];
    if (b64 === undefined) {
      if (optional) continue;
      throw new VolumeError(`references non-existent secret key: ${item.key}`);
    }
    payload.set(item.path, { data: Buffer.from(b64, 'base64'), mode: item.mode ?? defaultMode });
  }
  return payload;
}

export const secretPlugin: VolumePlugin = {
  name: SECRET_PLUGIN,
  requiresRemount: true,
  canSupport: (v) => v.secret !== undefined,
  check: (_pod, _v, host) => (host.objects ? undefined : `secret volumes need the apiserver: ${NEEDS_APISERVER}`),
  references: (pod, v) => [{ kind: 'secret', namespace: pod.metadata.namespace ?? '', name: v.secret?.secretName ?? '' }],
  async setUp(pod, v, host) {
    const src = v.secret ?? {};
    const namespace = pod.metadata.namespace ?? '';
    const name = src.secretName ?? '';
    const optional = src.optional === true;
    const secret = await getOptional(() => host.objects!.get({ kind: 'secret', namespace, name }), optional, {
      metadata: { namespace, name },
    });
    const payload = secretPayload(src.items, secret, src.defaultMode ?? DEFAULT_VOLUME_MODE, optional);
    return setUpWrappedVolume(pod, v, host, SECRET_PLUGIN, 'Memory', payload);
  },
  tearDown: (uid, name, host) => tearDownWrappedVolume(uid, name, host, SECRET_PLUGIN),
};
