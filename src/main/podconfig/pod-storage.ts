/**
 * podStorage: upstream pkg/kubelet/config/config.go merge semantics.
 *
 * Per-source pod maps keyed by UID; each incoming update is compared with
 * what the source sent before and turned into categorized deltas
 * (adds/updates/deletes/removes/reconciles) delivered in a fixed order.
 * Only the incremental notification mode exists here (the one the kubelet
 * uses); snapshot modes are not implemented.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { podFullName, type Pod } from '../../api/pod.js';
import { formatRFC3339Nano } from './defaults.js';
import {
  CONFIG_MIRROR_ANNOTATION,
  CONFIG_SEEN_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
  isMirrorPod,
  type PodOperation,
  type PodUpdate,
} from './types.js';

// --- semantic comparison (upstream podsDifferSemantically & co) -------------
/** Annotations the kubelet itself manages; ignored when comparing and kept from the stored pod. */
export const LOCAL_ANNOTATIONS: readonly string[] = [CONFIG_SOURCE_ANNOTATION, CONFIG_MIRROR_ANNOTATION, CONFIG_SEEN_ANNOTATION];

/**
 * Structural equality over JSON-like values. Object keys whose value is
 * undefined count as absent (they do not survive serialization).
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let na = 0;
  for (const k in ao) {
    if (ao[k] === undefined) continue;
    na++;
    if (!deepEqual(ao[k], bo[k])) return false;
  }
  let nb = 0;
  for (const k in bo) if (bo[k] !== undefined) nb++;
  return na === nb;
}

/** True when the maps are equal ignoring LOCAL_ANNOTATIONS (missing = empty). */
export function isAnnotationMapEqual(existing?: Record<string, string>, candidate?: Record<string, string>): boolean {
  const e = existing ?? {};
  const c = candidate ?? {};
  for (const [k, v] of Object.entries(c)) {
    if (LOCAL_ANNOTATIONS.includes(k)) continue;
    if (!(k in e) || e[k] !== v) return false;
  }
  for (const k of Object.keys(e)) {
    if (LOCAL_ANNOTATIONS.includes(k)) continue;
    if (!(k in c)) return false;
  }
  return true;
}

/** Spec, labels, deletionTimestamp, deletionGracePeriodSeconds or non-local annotations differ. */
export function podsDifferSemantically(existing: Pod, ref: Pod): boolean {
  const em = existing.metadata;
  const rm = ref.metadata;
  return !(
    deepEqual(existing.spec, ref.spec) &&
    deepEqual(em.labels, rm.labels) &&
    (em.deletionTimestamp ?? null) === (rm.deletionTimestamp ?? null) &&
    (em.deletionGracePeriodSeconds ?? null) === (rm.deletionGracePeriodSeconds ?? null) &&
    isAnnotationMapEqual(em.annotations, rm.annotations)
  );
}

export interface PodChange {
  needUpdate: boolean;
  needReconcile: boolean;
  needGracefulDelete: boolean;
}

/**
 * Upstream checkAndUpdatePod. Folds `ref` into `existing` (mutating it) and
 * reports at most one of:
 *  - needGracefulDelete: a meaningful change with a deletionTimestamp set;
 *  - needUpdate: any other meaningful change;
 *  - needReconcile: no meaningful change but the status differs.
 * On a meaningful change `ref`'s config.seen is overwritten with the stored one
 * and existing keeps its local annotations.
 * The resourceVersion goes with the status it came with: the status sync tells
 * someone else's newer change of a pod's status from a watch copy older than its
 * own write by it (status-sync.ts). Upstream keeps the first one, and its
 * needsReconcile compares statuses without versions.
 */
export function checkAndUpdatePod(existing: Pod, ref: Pod): PodChange {
  const result: PodChange = { needUpdate: false, needReconcile: false, needGracefulDelete: false };
  if (!podsDifferSemantically(existing, ref)) {
    if (!deepEqual(existing.status, ref.status)) {
      existing.status = ref.status;
      existing.metadata.resourceVersion = ref.metadata.resourceVersion;
      result.needReconcile = true;
    }
    return result;
  }
  const refAnnotations = (ref.metadata.annotations ??= {});
  const seen = existing.metadata.annotations?.[CONFIG_SEEN_ANNOTATION];
  if (seen === undefined) delete refAnnotations[CONFIG_SEEN_ANNOTATION];
  else refAnnotations[CONFIG_SEEN_ANNOTATION] = seen;

  existing.spec = ref.spec;
  existing.metadata.labels = ref.metadata.labels;
  existing.metadata.deletionTimestamp = ref.metadata.deletionTimestamp;
  existing.metadata.deletionGracePeriodSeconds = ref.metadata.deletionGracePeriodSeconds;
  existing.status = ref.status;
  existing.metadata.resourceVersion = ref.metadata.resourceVersion;
  const annotations: Record<string, string> = { ...refAnnotations };
  for (const k of LOCAL_ANNOTATIONS) {
    const v = existing.metadata.annotations?.[k];
    if (v !== undefined) annotations[k] = v;
  }
  existing.metadata.annotations = annotations;

  if (ref.metadata.deletionTimestamp != null) result.needGracefulDelete = true;
  else result.needUpdate = true;
  return result;
}

// --- podStorage ---------------------------------------------------------------

/** Optional hook for warning events about rejected pods (an EventRecorder later). */
export type PodEventRecorder = (pod: Pod, eventType: 'Warning', reason: string, message: string) => void;

export interface PodStorageOptions {
  clock: Clock;
  logger: Logger;
  recorder?: PodEventRecorder;
}

interface NameOwner {
  source: string;
  uid: string;
}

function uidOf(pod: Pod): string {
  return pod.metadata.uid ?? '';
}

/**
 * Upstream podStorage in PodConfigNotificationIncremental mode: the in-memory
 * truth of every source's pods. Not thread-safe by design: callers (PodConfig)
 * call merge() from one place at a time; merge is synchronous.
 *
 * Ownership: pods passed to merge() belong to the storage afterwards (they
 * are annotated and stored, not copied); pods in returned updates are deep
 * copies the caller may mutate. Passing a pod it was given before again,
 * unchanged, is a no-op: it is either the stored pod itself or one already
 * folded into it (the API source relies on this to copy only changed pods).
 */
export class PodStorage {
  private readonly pods = new Map<string, Map<string, Pod>>();
  private readonly sourcesSeen = new Set<string>();
  /** Full name → holder, for the cross-source duplicate check. Mirror pods are never registered. */
  private readonly nameOwners = new Map<string, NameOwner>();
  /** Pods dropped because another source holds their name; admitted once the name is free. */
  private readonly shadowed = new Map<string, Map<string, Pod>>();

  constructor(private readonly opts: PodStorageOptions) {}

  /**
   * Merges one update from `source` and returns the resulting deltas in
   * delivery order: REMOVE, ADD, UPDATE, DELETE, (the empty ADD that marks a
   * source's first SET when nothing else was added/updated/deleted),
   * RECONCILE — then ADDs of pods from other sources whose name this update
   * freed. Empty deltas are omitted.
   */
  merge(source: string, update: { op: PodOperation; pods: Pod[] }): PodUpdate[] {
    const seenBefore = this.sourcesSeen.has(source);
    const adds: Pod[] = [];
    const updates: Pod[] = [];
    const deletes: Pod[] = [];
    const removes: Pod[] = [];
    const reconciles: Pod[] = [];
    let pods = this.pods.get(source) ?? new Map<string, Pod>();
    let shadow = this.shadowed.get(source) ?? new Map<string, Pod>();

    const apply = (newPods: Pod[], oldPods: Map<string, Pod>, into: Map<string, Pod>) => {
      for (const ref of this.filterInvalidPods(newPods, source)) {
        const uid = uidOf(ref);
        (ref.metadata.annotations ??= {})[CONFIG_SOURCE_ANNOTATION] = source;
        const existing = oldPods.get(uid);
        if (existing) {
          into.set(uid, existing);
          const change = checkAndUpdatePod(existing, ref);
          if (change.needUpdate) updates.push(existing);
          else if (change.needReconcile) reconciles.push(existing);
          else if (change.needGracefulDelete) deletes.push(existing);
          continue;
        }
        const owner = this.nameOwners.get(podFullName(ref));
        if (!isMirrorPod(ref) && owner && owner.source !== source) {
          this.reportDuplicate(ref, source, `already provided by source ${JSON.stringify(owner.source)}`);
          shadow.set(uid, ref);
          continue;
        }
        shadow.delete(uid);
        this.recordFirstSeen(ref);
        into.set(uid, ref);
        if (!isMirrorPod(ref)) this.nameOwners.set(podFullName(ref), { source, uid });
        adds.push(ref);
      }
    };

    switch (update.op) {
      case 'ADD':
      case 'UPDATE':
      case 'DELETE':
        apply(update.pods, pods, pods);
        break;
      case 'REMOVE':
        for (const p of update.pods) {
          const uid = uidOf(p);
          shadow.delete(uid);
          const existing = pods.get(uid);
          if (!existing) continue;
          pods.delete(uid);
          removes.push(existing);
        }
        break;
      case 'SET': {
        this.sourcesSeen.add(source);
        const oldPods = pods;
        pods = new Map();
        shadow = new Map();
        apply(update.pods, oldPods, pods);
        for (const [uid, existing] of oldPods) if (!pods.has(uid)) removes.push(existing);
        break;
      }
      default:
        this.opts.logger.warn({ source, op: (update as { op: unknown }).op }, 'Received invalid update type');
    }
    this.pods.set(source, pods);
    this.shadowed.set(source, shadow);
    for (const p of removes) this.releaseName(source, p);

    const out: PodUpdate[] = [];
    const emit = (op: PodOperation, list: Pod[], src = source) => {
      if (list.length > 0) out.push({ op, pods: list.map((p) => structuredClone(p)), source: src });
    };
    emit('REMOVE', removes);
    emit('ADD', adds);
    emit('UPDATE', updates);
    emit('DELETE', deletes);
    const firstSet = !seenBefore && this.sourcesSeen.has(source);
    if (firstSet && adds.length === 0 && updates.length === 0 && deletes.length === 0) {
      out.push({ op: 'ADD', pods: [], source });
    }
    emit('RECONCILE', reconciles);
    if (removes.length > 0) for (const [src, admitted] of this.admitShadowed()) emit('ADD', admitted, src);
    return out;
  }

  /** True once every named source has delivered at least one SET (upstream markSourceSet). */
  seenSources(...sources: string[]): boolean {
    return sources.every((s) => this.sourcesSeen.has(s));
  }

  /** Deep copies of every stored pod, all sources. */
  mergedState(): Pod[] {
    const out: Pod[] = [];
    for (const m of this.pods.values()) for (const p of m.values()) out.push(structuredClone(p));
    return out;
  }

  /** Number of stored pods (all sources). */
  get size(): number {
    let n = 0;
    for (const m of this.pods.values()) n += m.size;
    return n;
  }

  /**
   * Upstream filterInvalidPods: drops a pod whose full name (name_namespace)
   * already appeared earlier in the same update. Also drops a repeated UID,
   * which upstream would store twice under one key.
   */
  private filterInvalidPods(pods: Pod[], source: string): Pod[] {
    const names = new Set<string>();
    const uids = new Set<string>();
    const out: Pod[] = [];
    for (const pod of pods) {
      const name = podFullName(pod);
      const uid = uidOf(pod);
      if (names.has(name) || uids.has(uid)) {
        this.reportDuplicate(pod, source, 'duplicate in the same update');
        continue;
      }
      names.add(name);
      uids.add(uid);
      out.push(pod);
    }
    return out;
  }

  private reportDuplicate(pod: Pod, source: string, why: string): void {
    const name = pod.metadata.name ?? '';
    this.opts.logger.error(
      { pod: `${pod.metadata.namespace ?? ''}/${name}`, uid: uidOf(pod), source, reason: why },
      'Pod failed validation due to duplicate pod name, ignoring',
    );
    this.opts.recorder?.(
      pod,
      'Warning',
      'FailedValidation',
      `Error validating pod ${name} from ${source} due to duplicate pod name ${JSON.stringify(name)} (${why}), ignoring`,
    );
  }

  private releaseName(source: string, pod: Pod): void {
    const key = podFullName(pod);
    const owner = this.nameOwners.get(key);
    if (owner && owner.source === source && owner.uid === uidOf(pod)) this.nameOwners.delete(key);
  }

  /** Moves shadowed pods whose name is free into their source; returns them per source. */
  private admitShadowed(): Map<string, Pod[]> {
    const admitted = new Map<string, Pod[]>();
    for (const [src, shadow] of this.shadowed) {
      for (const [uid, pod] of shadow) {
        const name = podFullName(pod);
        if (this.nameOwners.has(name)) continue;
        shadow.delete(uid);
        this.recordFirstSeen(pod);
        this.pods.get(src)?.set(uid, pod);
        this.nameOwners.set(name, { source: src, uid });
        const list = admitted.get(src) ?? [];
        list.push(pod);
        admitted.set(src, list);
      }
    }
    return admitted;
  }

  private recordFirstSeen(pod: Pod): void {
    (pod.metadata.annotations ??= {})[CONFIG_SEEN_ANNOTATION] = formatRFC3339Nano(this.opts.clock.now());
  }
}
