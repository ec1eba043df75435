/**
 * The image manager's list of the node's images (upstream
 * images/image_gc_manager.go: imageCache, refreshed by a goroutine every 30 s):
 * CRI ListImages in the background, kept sorted largest first (equal sizes by
 * id, descending, as upstream's ByImageSize). The node status reads this list
 * instead of asking the runtime at each of its updates. A failed refresh is
 * logged and keeps the last list.
 *
 * Before the first successful refresh a reader waits for one (started on
 * demand if the periodic loop has not run yet), so the node's first status
 * carries its images; if it fails the list is empty. Image GC's detection
 * (image-gc-manager.ts) lists through fetch(), which refreshes this list too.
 * Main thread.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { runPeriodically } from '../../common/periodic.js';
import type { CriClient } from '../../cri/client.js';
import type { RuntimeImage } from './image-gc-policy.js';
import { errorMessage } from '../../common/error-message.js';

/** One image as the node's status lists it. */
export interface NodeImage {
  repoDigests: string[];
  repoTags: string[];
  sizeBytes: number;
}

/** Upstream's refresh period of the image cache. */
export const IMAGE_CACHE_REFRESH_MS = 30_000;

export class ImageListCache {
  private images: NodeImage[] | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly cri: Pick<CriClient, 'listImages'>,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Refreshes now and every IMAGE_CACHE_REFRESH_MS until the signal aborts. */
  start(signal: AbortSignal): void {
    const onError = (err: unknown) => this.logger.error({ err }, 'Image list refresh failed');
    runPeriodically(() => this.refresh(), { periodMs: IMAGE_CACHE_REFRESH_MS, signal, clock: this.clock, immediate: true, onError }).catch(
      onError,
    );
  }

  /** The node's images, largest first (upstream GetImageList). */
  async list(): Promise<NodeImage[]> {
    if (!this.images) await this.refresh();
    return this.images ?? [];
  }

  /** One ListImages; concurrent callers share the one in flight. */
  refresh(): Promise<void> {
    this.refreshing ??= this.listNow().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** One ListImages now, also refreshing the node's list; rejects when the runtime fails. */
  async fetch(): Promise<RuntimeImage[]> {
    const { images } = await this.cri.listImages({}, { timeoutMs: 30_000 });
    this.images = images
      .map((i) => ({ id: i.id, repoDigests: i.repoDigests, repoTags: i.repoTags, sizeBytes: Number(i.size) }))
      .sort((a, b) => b.sizeBytes - a.sizeBytes || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .map(({ id: _id, ...image }) => image);
    return images.map((i) => ({ id: i.id, size: Number(i.size), pinned: i.pinned }));
  }

  private async listNow(): Promise<void> {
    try {
      await this.fetch();
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'Failed to update image list');
    }
  }
}
