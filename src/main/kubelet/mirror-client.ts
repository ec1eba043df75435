/**
 * Mirror pods (upstream pod.MirrorClient and the static-pod part of
 * Kubelet.syncPod): the apiserver's read-only copy of each static pod, so the
 * cluster sees it. A mirror pod carries the static pod's spec, its annotations
 * plus kubernetes.io/config.mirror = the static pod's config.hash, and a
 * controller owner reference to the Node.
 * - `sync(pod, mirror)` deletes a mirror that no longer matches (another hash,
 *   or being deleted) and creates one when there is none (unless the Node is
 *   gone or being deleted).
 * - `delete` uses grace 0 and, when known, a UID precondition.
 */
import type { Logger } from 'pino';
import { podFullName, type Pod } from '../../api/pod.js';
import type { Node } from '../../api/cluster.js';
import { isAlreadyExists, isConflict, isNotFound, type RestClient } from '../apiserver/rest-client.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION } from '../podconfig/types.js';

export interface MirrorClientOptions {
  client: RestClient;
  nodeName: string;
  /** The Node as last seen (its UID for the owner reference); undefined before registration. */
  node: () => Node | undefined;
  logger: Logger;
}

const podPath = (namespace: string, name: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods${name ? `/${encodeURIComponent(name)}` : ''}`;

export class MirrorClient {
  constructor(private readonly options: Readonly<MirrorClientOptions>) {}

  async create(pod: Pod): Promise<void> {
    const node = this.options.node();
    const hash = pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION] ?? pod.metadata.uid ?? '';
    const mirror = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: pod.metadata.name,
        namespace: pod.metadata.namespace,
        labels: pod.metadata.labels,
        annotations: { ...pod.metadata.annotations, [CONFIG_MIRROR_ANNOTATION]: hash },
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Node', name: this.options.nodeName, uid: node?.metadata?.uid ?? '', controller: true },
        ],
      },
      spec: pod.spec,
    };
    try {
      await this.options.client.create(podPath(pod.metadata.namespace ?? 'default', ''), mirror);
      this.options.logger.info({ pod: podFullName(pod) }, 'Created mirror pod');
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await this.options.client.get<Pod>(podPath(pod.metadata.namespace ?? 'default', pod.metadata.name ?? ''));
      if (existing.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== hash) throw err;
    }
  }

  /** Deletes the mirror pod (grace 0, UID precondition when given); false when it was already gone. */
  async delete(namespace: string, name: string, uid?: string): Promise<boolean> {
    try {
      await this.options.client.delete(podPath(namespace, name), { gracePeriodSeconds: 0, ...(uid ? { preconditions: { uid } } : {}) });
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
  }

  /** Upstream syncPod's mirror step for a static pod; `isMirrorOf` is PodManager.isMirrorPodOf. */
  async sync(pod: Pod, mirror: Pod | undefined, isMirrorOf: (mirror: Pod, pod: Pod) => boolean): Promise<void> {
    let deleted = false;
    if (mirror && (mirror.metadata.deletionTimestamp || !isMirrorOf(mirror, pod))) {
      deleted = await this.delete(mirror.metadata.namespace ?? 'default', mirror.metadata.name ?? '', mirror.metadata.uid);
      if (deleted) this.options.logger.info({ pod: podFullName(mirror) }, 'Deleted mirror pod because it is outdated');
    }
    if (mirror && !deleted) return;
    const node = this.options.node();
    if (!node || node.metadata?.deletionTimestamp) return;
    await this.create(pod);
  }
}
