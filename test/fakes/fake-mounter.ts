import { existsSync } from 'node:fs';
import type { MountInfo, Mounter } from '../../src/common/mounter.js';

/**
 * An in-memory mount table. mount/bindMount record a mount point (the target
 * must exist, as mount(8) requires); unmount removes it. Nothing is really
 * mounted: files written "into" a fake tmpfs land on the test's disk.
 */
export class FakeMounter implements Mounter {
  readonly mounts: MountInfo[] = [];
  readonly calls: string[] = [];
  /** Makes the next operation of that kind fail with this message. */
  failNext: Partial<Record<'mount' | 'bindMount' | 'unmount', string>> = {};
  private nextId = 100;

  constructor(private readonly fs: { exists(path: string): boolean } = { exists: existsSync }) {}

  private take(kind: 'mount' | 'bindMount' | 'unmount'): void {
    const msg = this.failNext[kind];
    if (msg !== undefined) {
      delete this.failNext[kind];
      throw new Error(msg);
    }
  }

  async mount(source: string, target: string, fsType: string, options: string[] = []): Promise<void> {
    this.calls.push(`mount -t ${fsType} ${options.join(',')} ${source} ${target}`.replace(/ {2}/g, ' '));
    this.take('mount');
    if (!this.fs.exists(target)) throw new Error(`mount: ${target}: mount point does not exist`);
    this.mounts.push(this.info(source, target, fsType, options));
  }

  async bindMount(source: string, target: string): Promise<void> {
    this.calls.push(`bind ${source} ${target}`);
    this.take('bindMount');
    if (!this.fs.exists(target)) throw new Error(`mount: ${target}: mount point does not exist`);
    this.mounts.push(this.info(source, target, 'bind', []));
  }

  async makeRShared(target: string): Promise<void> {
    this.calls.push(`make-rshared ${target}`);
  }

  async unmount(target: string): Promise<void> {
    this.calls.push(`umount ${target}`);
    this.take('unmount');
    const i = this.mounts.findIndex((m) => m.mountPoint === target);
    if (i < 0) throw new Error(`umount: ${target}: not mounted`);
    this.mounts.splice(i, 1);
  }

  async list(): Promise<MountInfo[]> {
    return [...this.mounts];
  }

  private info(source: string, target: string, fsType: string, options: string[]): MountInfo {
    return {
      id: this.nextId++,
      parentId: 1,
      device: '0:99',
      root: '/',
      mountPoint: target,
      options: ['rw'],
      optional: [],
      fsType,
      source,
      superOptions: options,
    };
  }
}
