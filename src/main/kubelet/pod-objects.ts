/**
 * The Secrets and ConfigMaps a pod's containers read outside volumes — env
 * `secretKeyRef` / `configMapKeyRef`, `envFrom`, and `imagePullSecrets` —
 * resolved on the main thread for the sync task (workers have no apiserver):
 * upstream's secret and configMap managers (RegisterPod / GetSecret over the
 * watch-based object cache) and getPullSecretsForPod.
 * - A pod's references are registered with the object cache on first use and
 *   unregistered by `forget` when the pod goes.
 * - A missing object is `null` (the container config decides whether that is
 *   an error: `optional`); any other read failure fails the sync, which retries.
 * - A pull secret that cannot be read, or is malformed, is skipped with upstream's
 *   FailedToRetrieveImagePullSecret event; the pull goes on with the others.
 */
import { parseImageName } from '../../api/image-reference.js';
import type { Pod } from '../../api/pod.js';
import { isNotFound } from '../apiserver/rest-client.js';
import { DockerKeyring, dockerConfigOf } from '../images/docker-keyring.js';
import { podReference, type EventRecorder } from '../events/event-recorder.js';
import type { ObjectRef, ObjectSource } from '../volumes/volume-plugin.js';
import { isEnvVarName } from '../../pod/env-values.js';
import type { PodObjects } from '../../pod/sync-types.js';

interface Refs {
  secrets: Set<string>;
  configMaps: Set<string>;
  pullSecrets: string[];
}

/** Everything a pod's containers reference by name outside volumes. */
export function podObjectRefs(pod: Pod): Refs {
  const refs: Refs = { secrets: new Set(), configMaps: new Set(), pullSecrets: [] };
  const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers, ...(pod.spec.ephemeralContainers ?? [])];
  for (const c of containers) {
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef?.name) refs.secrets.add(e.valueFrom.secretKeyRef.name);
      if (e.valueFrom?.configMapKeyRef?.name) refs.configMaps.add(e.valueFrom.configMapKeyRef.name);
    }
    for (const f of c.envFrom ?? []) {
      if (f.secretRef?.name) refs.secrets.add(f.secretRef.name);
      if (f.configMapRef?.name) refs.configMaps.add(f.configMapRef.name);
    }
  }
  for (const s of pod.spec.imagePullSecrets ?? []) if (s.name) refs.pullSecrets.push(s.name);
  return refs;
}

const decode = (data: Record<string, string> | undefined) =>
  Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

export class PodObjectsResolver {
  private readonly registered = new Map<string, ObjectRef[]>();
  private readonly warned = new Set<string>();

  constructor(private readonly options: Readonly<{ objects: ObjectSource; recorder: EventRecorder }>) {}

  private register(uid: string, namespace: string, refs: Refs): void {
    const want: ObjectRef[] = [
      ...[...refs.secrets, ...refs.pullSecrets].map((name): ObjectRef => ({ kind: 'secret', namespace, name })),
      ...[...refs.configMaps].map((name): ObjectRef => ({ kind: 'configmap', namespace, name })),
    ];
    const key = (r: ObjectRef) => `${r.kind}/${r.name}`;
    const had = this.registered.get(uid) ?? [];
    const wantKeys = new Set(want.map(key));
    const hadKeys = new Set(had.map(key));
    for (const r of want) if (!hadKeys.has(key(r))) this.options.objects.register(r);
    for (const r of had) if (!wantKeys.has(key(r))) this.options.objects.unregister(r);
    this.registered.set(uid, want);
  }

  /** The pod's objects, or undefined when it references none. */
  async resolve(pod: Pod): Promise<PodObjects | undefined> {
    const refs = podObjectRefs(pod);
    if (refs.secrets.size + refs.configMaps.size + refs.pullSecrets.length === 0) {
      this.forget(pod.metadata.uid ?? '');
      return undefined;
    }
    const ns = pod.metadata.namespace ?? 'default';
    this.register(pod.metadata.uid ?? '', ns, refs);
    const out: PodObjects = { secrets: {}, configMaps: {}, pullAuths: {} };
    const orNull = async <T>(p: Promise<T>): Promise<T | null> => {
      try {
        return await p;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    };
    for (const name of refs.secrets) {
      const s = await orNull(this.options.objects.get({ kind: 'secret', namespace: ns, name }));
      out.secrets[name] = s ? decode(s.data) : null;
    }
    for (const name of refs.configMaps) {
      const c = await orNull(this.options.objects.get({ kind: 'configmap', namespace: ns, name }));
      out.configMaps[name] = c ? { ...c.data, ...decode(c.binaryData) } : null;
    }
    this.warnInvalidEnvFromKeys(pod, out);
    if (refs.pullSecrets.length > 0) {
      const keyring = new DockerKeyring();
      const failed: string[] = [];
      for (const name of refs.pullSecrets) {
        try {
          const s = await this.options.objects.get({ kind: 'secret', namespace: ns, name });
          const config = dockerConfigOf(s.type, s.data ?? {});
          if (config) keyring.add(config);
        } catch {
          failed.push(name);
        }
      }
      if (failed.length > 0) {
        this.options.recorder.record(
          podReference(pod),
          'Warning',
          'FailedToRetrieveImagePullSecret',
          `Unable to retrieve some image pull secrets (${failed.join(', ')}); attempting to pull the image may not succeed.`,
        );
      }
      const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
      for (const c of containers) {
        if (!c.image) continue;
        // upstream PullImage: the keyring is searched with the normalized repository (docker.io/library/busybox).
        let repository: string;
        try {
          repository = parseImageName(c.image).repository;
        } catch {
          continue; // InvalidImageName is reported by the pull itself
        }
        out.pullAuths[c.image] = keyring.lookup(repository);
      }
    }
    return out;
  }

  /**
   * upstream makeEnvironmentVariables: envFrom keys that are not valid variable
   * names are skipped with an InvalidEnvironmentVariableNames warning (here once
   * per pod and source, not at every sync).
   */
  private warnInvalidEnvFromKeys(pod: Pod, out: PodObjects): void {
    const uid = pod.metadata.uid ?? '';
    for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
      for (const f of c.envFrom ?? []) {
        const name = (f.configMapRef ?? f.secretRef)?.name ?? '';
        const kind = f.configMapRef ? 'configMap' : 'secret';
        const data = f.configMapRef ? out.configMaps[name] : out.secrets[name];
        const invalid = Object.keys(data ?? {})
          .filter((k) => !isEnvVarName((f.prefix ?? '') + k))
          .sort();
        const key = `${uid}/${kind}/${name}`;
        if (invalid.length === 0 || this.warned.has(key)) continue;
        this.warned.add(key);
        this.options.recorder.record(
          podReference(pod),
          'Warning',
          'InvalidEnvironmentVariableNames',
          `Keys [${invalid.join(', ')}] from the EnvFrom ${kind} ${pod.metadata.namespace ?? 'default'}/${name} were skipped since they are considered invalid environment variable names.`,
        );
      }
    }
  }

  forget(uid: string): void {
    for (const r of this.registered.get(uid) ?? []) this.options.objects.unregister(r);
    this.registered.delete(uid);
    for (const k of this.warned) if (k.startsWith(`${uid}/`)) this.warned.delete(k);
  }
}
