/**
 * configMap and secret volumes (upstream pkg/volume/configmap, pkg/volume/secret):
 * the keys of one ConfigMap or Secret (all of them, or the listed `items`) as
 * files, written with the atomic writer and rewritten on every pod sync, so
 * updates reach running pods. A configMap's files sit on the node's disk, a
 * secret's on a tmpfs (never on disk). `optional` tolerates a missing object
 * or key. Both need the apiserver; projected volumes reuse objectPayload.
 */
import type { ConfigMap, Secret, Volume } from '../../api/core-v1.js';
import { VolumeError } from '../../common/errors.js';
import { isNotFound } from '../apiserver/rest-client.js';
import type { Payload } from './atomic-writer.js';
import type { StorageMedium } from './empty-dir-plugin.js';
import type { ObjectKind, ObjectRef, VolumeHost, VolumePlugin } from './volume-plugin.js';
import { DEFAULT_VOLUME_MODE, setUpWrappedVolume, tearDownWrappedVolume } from './wrapped-volume.js';

export const CONFIG_MAP_PLUGIN = 'kubernetes.io/configmap';
export const SECRET_PLUGIN = 'kubernetes.io/secret';

export const NEEDS_APISERVER = 'kubelet-ts runs standalone (no --kubeconfig), so there is no apiserver to read it from';

export type KeyItems = NonNullable<NonNullable<Volume['configMap']>['items']> | undefined;

/** A ConfigMap's keys: data as UTF-8, binaryData decoded from base64. */
export function configMapKeys(cm: ConfigMap): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) keys.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) if (!keys.has(k)) keys.set(k, Buffer.from(v, 'base64'));
  return keys;
}

/** A Secret's keys, decoded from base64. */
export function secretKeys(secret: Secret): Map<string, Buffer> {
  return new Map(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

const MISSING_KEY: Record<ObjectKind, (key: string) => string> = {
  configmap: (key) => `configmap references non-existent config key: ${key}`,
  secret: (key) => `references non-existent secret key: ${key}`,
};

/** Upstream MakePayload: every key with the default mode, or the listed items with their own path and mode. */
export function keysPayload(kind: ObjectKind, keys: Map<string, Buffer>, items: KeyItems, defaultMode: number, optional: boolean): Payload {
  const payload: Payload = new Map();
  if (!items || items.length === 0) {
    for (const [k, data] of keys) payload.set(k, { data, mode: defaultMode });
    return payload;
  }
  for (const item of items) {
    const data = keys.get(item.key);
    if (data === undefined) {
      if (optional) continue;
      throw new VolumeError(MISSING_KEY[kind](item.key));
    }
    payload.set(item.path, { data, mode: item.mode ?? defaultMode });
  }
  return payload;
}

/** Reads the object (a missing optional one counts as empty, as upstream) and makes its payload. */
export async function objectPayload(
  host: VolumeHost,
  ref: ObjectRef,
  items: KeyItems,
  defaultMode: number,
  optional: boolean,
): Promise<Payload> {
  let keys: Map<string, Buffer>;
  try {
    keys =
      ref.kind === 'configmap'
        ? configMapKeys(await host.objects!.get({ ...ref, kind: 'configmap' }))
        : secretKeys(await host.objects!.get({ ...ref, kind: 'secret' }));
  } catch (err) {
    if (!(optional && isNotFound(err))) throw err;
    keys = new Map();
  }
  return keysPayload(ref.kind, keys, items, defaultMode, optional);
}

interface ObjectVolumeKind {
  plugin: string;
  kind: ObjectKind;
  medium: StorageMedium;
  /** The volume source's fields. */
  source(v: Volume): { name?: string; items?: KeyItems; defaultMode?: number; optional?: boolean } | undefined;
}

function objectVolumePlugin(k: ObjectVolumeKind, what: string): VolumePlugin {
  const ref = (namespace: string, v: Volume): ObjectRef => ({ kind: k.kind, namespace, name: k.source(v)?.name ?? '' });
  return {
    name: k.plugin,
    requiresRemount: true,
    canSupport: (v) => k.source(v) !== undefined,
    check: (_pod, _v, host) => (host.objects ? undefined : `${what} volumes need the apiserver: ${NEEDS_APISERVER}`),
    references: (pod, v) => [ref(pod.metadata.namespace ?? '', v)],
    async setUp(pod, v, host) {
      const src = k.source(v) ?? {};
      const payload = await objectPayload(
        host,
        ref(pod.metadata.namespace ?? '', v),
        src.items,
        src.defaultMode ?? DEFAULT_VOLUME_MODE,
        src.optional === true,
      );
      return setUpWrappedVolume(pod, v, host, k.plugin, k.medium, payload);
    },
    tearDown: (uid, name, host) => tearDownWrappedVolume(uid, name, host, k.plugin),
  };
}

export const configMapPlugin = objectVolumePlugin(
  { plugin: CONFIG_MAP_PLUGIN, kind: 'configmap', medium: '', source: (v) => v.configMap },
  'configMap',
);

export const secretPlugin = objectVolumePlugin(
  { plugin: SECRET_PLUGIN, kind: 'secret', medium: 'Memory', source: (v) => v.secret && { ...v.secret, name: v.secret.secretName } },
  'secret',
);
