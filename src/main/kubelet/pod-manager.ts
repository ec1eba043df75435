/**
 * The desired pods (upstream pod.Manager): what the config sources say this
 * node should run, by UID and by full name. Main thread only.
 */
import { podFullName, type Pod } from '../../api/pod.js';

export class PodManager {
  private readonly byUid = new Map<string, Pod>();
  private readonly byFullName = new Map<string, Pod>();

  addOrUpdate(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const old = this.byUid.get(uid);
    if (old) this.byFullName.delete(podFullName(old));
    this.byUid.set(uid, pod);
    this.byFullName.set(podFullName(pod), pod);
  }

  remove(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const old = this.byUid.get(uid);
    if (!old) return;
    this.byUid.delete(uid);
    if (this.byFullName.get(podFullName(old)) === old) this.byFullName.delete(podFullName(old));
  }

  get(uid: string): Pod | undefined {
    return this.byUid.get(uid);
  }

  getByFullName(fullName: string): Pod | undefined {
    return this.byFullName.get(fullName);
  }

  pods(): Pod[] {
    return [...this.byUid.values()];
  }

  get size(): number {
    return this.byUid.size;
  }
}
