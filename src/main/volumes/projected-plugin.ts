/**
 * projected volumes (upstream pkg/volume/projected): secrets, configMaps,
 * downward API items and service-account tokens (TokenRequest, bound to the
 * pod) merged into one directory on a tmpfs, written with the atomic writer
 * and rewritten on every pod sync (a token is renewed once past 80 % of its
 * life). Sources that read the apiserver need one; a downwardAPI-only
 * projection works standalone. Errors of all sources are reported together.
 */
import type { Volume } from '../../api/core-v1.js';
import type { Container, Pod } from '../../api/pod.js';
import { VolumeError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { Payload } from './atomic-writer.js';
import { collectDownwardAPIData } from './downward-api-plugin.js';
import { NEEDS_APISERVER, objectPayload } from './object-volume-plugins.js';
import { fsGroupOf } from './volume-ownership.js';
import type { ObjectRef, VolumeHost, VolumePlugin } from './volume-plugin.js';
import { DEFAULT_VOLUME_MODE, setUpWrappedVolume, tearDownWrappedVolume, throwIfErrors } from './wrapped-volume.js';

export const PROJECTED_PLUGIN = 'kubernetes.io/projected';

type Projection = NonNullable<NonNullable<Volume['projected']>['sources']>[number];
const SUPPORTED = ['secret', 'configMap', 'downwardAPI', 'serviceAccountToken'];

function kindOf(p: Projection): string {
  return (
    Object.keys(p).find((k) => (p as Record<string, unknown>)[k] !== undefined && (p as Record<string, unknown>)[k] !== null) ?? 'none'
  );
}

/**
 * Upstream FsUserFrom: the one runAsUser every (init) container runs as, if
 * they all set the same one; the token file is then owned by that user.
 */
export function fsUserFrom(pod: Pod): number | undefined {
  let user: number | undefined;
  for (const c of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])] as Container[]) {
    const uid = c.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser;
    if (uid === undefined || (user !== undefined && user !== uid)) return undefined;
    user = uid;
  }
  return user;
}

async function collect(pod: Pod, v: Volume, host: VolumeHost): Promise<Payload> {
  const src = v.projected ?? {};
  const defaultMode = src.defaultMode ?? DEFAULT_VOLUME_MODE;
  const namespace = pod.metadata.namespace ?? '';
  const payload: Payload = new Map();
  const errors: string[] = [];
  for (const source of src.sources ?? []) {
    try {
      let part: Payload;
      if (source.secret || source.configMap) {
        const kind = source.secret ? 'secret' : 'configmap';
        const obj = (source.secret ?? source.configMap)!;
        part = await objectPayload(host, { kind, namespace, name: obj.name ?? '' }, obj.items, defaultMode, obj.optional === true);
      } else if (source.downwardAPI) {
        part = collectDownwardAPIData(pod, source.downwardAPI.items ?? [], defaultMode, host);
      } else if (source.serviceAccountToken) {
        const tp = source.serviceAccountToken;
        const sa = pod.spec.serviceAccountName;
        if (!sa) throw new VolumeError('a serviceAccountToken projection needs spec.serviceAccountName');
        const fsUser = fsUserFrom(pod);
        const tr = await host.tokens!.getServiceAccountToken(namespace, sa, {
          audiences: tp.audience ? [tp.audience] : [],
          expirationSeconds: tp.expirationSeconds ?? 3600,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' },
        });
        const mode = fsUser !== undefined || fsGroupOf(pod).fsGroup !== undefined ? 0o600 : defaultMode;
        part = new Map([
          [tp.path, { data: Buffer.from(tr.status?.token ?? '', 'utf8'), mode, ...(fsUser !== undefined ? { fsUser } : {}) }],
        ]);
      } else {
        continue;
      }
      for (const [k, f] of part) payload.set(k, f);
    } catch (err) {
      errors.push(errorMessage(err));
    }
  }
  throwIfErrors(errors);
  return payload;
}

export const projectedPlugin: VolumePlugin = {
  name: PROJECTED_PLUGIN,
  requiresRemount: true,
  canSupport: (v) => v.projected !== undefined,
  check(_pod, v, host) {
    const kinds = (v.projected?.sources ?? []).map(kindOf);
    const unsupported = kinds.filter((k) => !SUPPORTED.includes(k));
    if (unsupported.length > 0) return `projected ${unsupported.join(', ')} sources are not supported by kubelet-ts`;
    const needsApi = kinds.filter((k) => k !== 'downwardAPI');
    if (needsApi.length > 0 && (!host.objects || !host.tokens))
      return `projected ${[...new Set(needsApi)].join(', ')} sources need the apiserver: ${NEEDS_APISERVER}`;
    return undefined;
  },
  references(pod, v): ObjectRef[] {
    const namespace = pod.metadata.namespace ?? '';
    return (v.projected?.sources ?? []).flatMap((s): ObjectRef[] =>
      s.secret
        ? [{ kind: 'secret', namespace, name: s.secret.name ?? '' }]
        : s.configMap
          ? [{ kind: 'configmap', namespace, name: s.configMap.name ?? '' }]
          : [],
    );
  },
  async setUp(pod, v, host) {
    return setUpWrappedVolume(pod, v, host, PROJECTED_PLUGIN, 'Memory', await collect(pod, v, host));
  },
  tearDown: (uid, name, host) => tearDownWrappedVolume(uid, name, host, PROJECTED_PLUGIN),
};
