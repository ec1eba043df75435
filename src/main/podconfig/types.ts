/**
 * Pod configuration contracts shared by sources, podStorage and the syncLoop
 * (upstream pkg/kubelet/types/pod_update.go).
 */
import type { Pod } from '../../api/pod.js';

/**
 * SET      the complete pod list of one source (sources send only this, or the
 *          incremental ADD/UPDATE/DELETE/REMOVE below);
 * ADD      pods new to the kubelet;
 * UPDATE   spec or relevant metadata changed;
 * DELETE   graceful deletion requested (deletionTimestamp appeared);
 * REMOVE   the pod is gone from its source: stop it now;
 * RECONCILE only the status differs from what the source last sent.
 */
export type PodOperation = 'SET' | 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE';

export const FILE_SOURCE = 'file';
export const HTTP_SOURCE = 'http';
export const API_SOURCE = 'api';
/** Source of a full-state SET from PodConfig.sync(); never a real source. */
export const ALL_SOURCES = '*';
export type SourceName = typeof FILE_SOURCE | typeof HTTP_SOURCE | typeof API_SOURCE | (string & {});

export interface PodUpdate {
  op: PodOperation;
  pods: Pod[];
  source: SourceName;
}

/** Annotations the kubelet reads and writes (upstream kubetypes.Config*AnnotationKey). */
export const CONFIG_SOURCE_ANNOTATION = 'kubernetes.io/config.source';
export const CONFIG_HASH_ANNOTATION = 'kubernetes.io/config.hash';
export const CONFIG_SEEN_ANNOTATION = 'kubernetes.io/config.seen';
export const CONFIG_MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** A mirror pod: the apiserver's copy of a static pod (upstream kubetypes.IsMirrorPod). */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
}

/** Upstream kubetypes.IsStaticPod: the pod came from a file or HTTP source (any source but the apiserver). */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION];
  return source !== undefined && source !== API_SOURCE;
}

/**
 * The input side of PodConfig for one source. Calls are synchronous and never
 * block: the update is merged immediately and its deltas queued for the
 * consumer. The update's `source` field is ignored; the channel's name wins.
 */
export type SourceChannel = (update: Omit<PodUpdate, 'source'> & { source?: SourceName }) => void;

/**
 * Every pod source (file, http, and later the apiserver) implements this.
 * Contract:
 *  - `start` begins producing and returns once started; production stops when
 *    `signal` aborts, after which `out` is never called again.
 *  - A source emits its own complete state as SET (or incremental ops), and
 *    emits at least one (possibly empty) SET once it has read its backing
 *    store, so that the source can be marked seen.
 *  - `start` is called at most once.
 */
export interface PodSource {
  readonly name: SourceName;
  start(signal: AbortSignal, out: SourceChannel): void;
}
