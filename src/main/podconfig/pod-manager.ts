/**
 * The desired pods (upstream pod.Manager): what the config sources say this
 * node should run, by UID and by full name, with mirror pods (the apiserver's
 * copies of static pods, annotated kubernetes.io/config.mirror) kept apart:
 * they are never run, they only mirror a static pod. Main thread only.
 */
import { podFullName, type Pod } from '../../api/pod.js';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, isMirrorPod } from './types.js';

class PodIndex {
  readonly byUid = new Map<string, Pod>();
  readonly byFullName = new Map<string, Pod>();

  set(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const old = this.byUid.get(uid);
    if (old) this.byFullName.delete(podFullName(old));
    this.byUid.set(uid, pod);
    this.byFullName.set(podFullName(pod), pod);
  }

  delete(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const old = this.byUid.get(uid);
    if (!old) return;
    this.byUid.delete(uid);
    if (this.byFullName.get(podFullName(old)) === old) this.byFullName.delete(podFullName(old));
  }
}

export class PodManager {
  private readonly regular = new PodIndex();
  private readonly mirrors = new PodIndex();

  addOrUpdate(pod: Pod): void {
    (isMirrorPod(pod) ? this.mirrors : this.regular).set(pod);
  }

  remove(pod: Pod): void {
    (isMirrorPod(pod) ? this.mirrors : this.regular).delete(pod);
  }

  /** A regular (non-mirror) pod by UID. */
  get(uid: string): Pod | undefined {
    return this.regular.byUid.get(uid);
  }

  getByFullName(fullName: string): Pod | undefined {
    return this.regular.byFullName.get(fullName);
  }

  /** The regular pods (mirror pods excluded). */
  pods(): Pod[] {
    return [...this.regular.byUid.values()];
  }

  get size(): number {
    return this.regular.byUid.size;
  }

  mirrorPods(): Pod[] {
    return [...this.mirrors.byUid.values()];
  }

  /** The mirror pod of a static pod, by full name. */
  mirrorPodOf(pod: Pod): Pod | undefined {
    return this.mirrors.byFullName.get(podFullName(pod));
  }

  /** The static pod a mirror pod mirrors, by full name. */
  podOfMirror(mirror: Pod): Pod | undefined {
    return this.regular.byFullName.get(podFullName(mirror));
  }

  /** Upstream IsMirrorPodOf: same full name, and the mirror's config.mirror hash is the pod's config.hash. */
  isMirrorPodOf(mirror: Pod, pod: Pod): boolean {
    if (podFullName(mirror) !== podFullName(pod)) return false;
    const hash = pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
    return hash !== undefined && mirror.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] === hash;
  }
}
