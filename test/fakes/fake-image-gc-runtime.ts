import type { ImageGcRuntime } from '../../src/main/images/image-gc-manager.js';
import type { FsFigures, RuntimeImage } from '../../src/main/images/image-gc-policy.js';

/**
 * An in-memory runtime for image GC (the ImageGcRuntime seam): images with
 * sizes, the ids in use, a filesystem whose available bytes grow by each
 * removed image's size, and removals that fail for the ids in `failRemoval`.
 */
export class FakeImageGcRuntime {
  readonly images = new Map<string, RuntimeImage>();
  readonly inUse = new Set<string>();
  readonly failRemoval = new Set<string>();
  /** Ids removed, in order. */
  readonly removed: string[] = [];
  fs: FsFigures = { capacityBytes: 1000n, availableBytes: 1000n };
  listError: Error | undefined;

  add(id: string, size: number, o: { pinned?: boolean; inUse?: boolean } = {}): this {
    this.images.set(id, { id, size, pinned: o.pinned ?? false });
    if (o.inUse) this.inUse.add(id);
    return this;
  }

  readonly api = {
    listImages: async () => {
      if (this.listError) throw this.listError;
      return [...this.images.values()].map((i) => ({ ...i }));
    },
    imagesInUse: async () => new Set(this.inUse),
    removeImage: async (id: string) => {
      if (this.failRemoval.has(id)) throw new Error(`remove ${id}: device busy`);
      const image = this.images.get(id);
      if (!image) throw new Error(`remove ${id}: not found`);
      this.images.delete(id);
      this.removed.push(id);
      this.fs = { ...this.fs, availableBytes: this.fs.availableBytes + BigInt(image.size) };
    },
    imageFsStats: async () => ({ ...this.fs }),
  } satisfies ImageGcRuntime;
}
