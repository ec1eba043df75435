import type { Pod } from '../../src/api/pod.js';
import type { PodVolumeManager, VolumeMap } from '../../src/main/volumes/volume-manager.js';

/** A volume manager that answers from a table: volumes per pod UID, or an error to fail the mount with. */
export class FakeVolumeManager implements PodVolumeManager {
  readonly calls: string[] = [];
  readonly volumes = new Map<string, VolumeMap>();
  readonly failures = new Map<string, Error>();
  /** Waits never end on their own (only their signal ends them). */
  hold = false;
  /** Errors the next waitForUnmount calls fail with, in order (a teardown that does not finish). */
  readonly unmountFailures: Error[] = [];

  podDir(uid: string): string {
    return `/root/pods/${uid}`;
  }

  async waitForAttachAndMount(pod: Pod, signal?: AbortSignal): Promise<VolumeMap> {
    const uid = pod.metadata.uid ?? '';
    this.calls.push(`mount ${uid}`);
    if (this.hold) {
      await new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }
    const err = this.failures.get(uid);
    if (err) throw err;
    return this.volumes.get(uid) ?? {};
  }

  async waitForUnmount(uid: string): Promise<void> {
    this.calls.push(`unmount ${uid}`);
    const err = this.unmountFailures.shift();
    if (err) throw err;
  }
}
