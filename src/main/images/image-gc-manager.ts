/**
 * Image garbage collection (upstream images/image_gc_manager.go and
 * Kubelet.StartGarbageCollection): every imageGcPeriod (upstream's fixed
 * ImageGCPeriod, 5m; first run at start) the images are detected, then, unless
 * the high threshold is 100, the image filesystem is checked and unused images
 * are removed, least recently used first, until usage is back at the low
 * threshold.
 *
 * Upstream runs detection and collection as two loops of the same period; here
 * one loop does both in that order, so a collection never races the first
 * detection (which marks the images already present as old enough).
 *
 * Events on the node, as upstream: InvalidDiskCapacity (image fs capacity 0),
 * FreeDiskSpaceFailed (a collection freed less than it wanted), and
 * ImageGCFailed when collection fails twice or more in a row. Main thread;
 * runs never overlap.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { ImageGcError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import { runPeriodically } from '../../common/periodic.js';
import type { ObjectReference } from '../../api/cluster.js';
import type { EventRecorder } from '../events/event-recorder.js';
import {
  assessUsage,
  gcDisabled,
  policyError,
  removalOrder,
  updateRecords,
  type FsFigures,
  type ImageGcPolicy,
  type ImageRecord,
  type RuntimeImage,
} from './image-gc-policy.js';

/** What image GC needs from the runtime and the host (CRI-backed: image-gc-runtime.ts; fake: test/fakes/). */
export interface ImageGcRuntime {
  /** Every image on the node (CRI ListImages). */
  listImages(): Promise<RuntimeImage[]>;
  /** Image ids used by any container the runtime lists (running or not) and by the sandbox image. */
  imagesInUse(): Promise<Set<string>>;
  /** CRI RemoveImage. */
  removeImage(id: string): Promise<void>;
  /** Capacity and available bytes of the image filesystem. */
  imageFsStats(): Promise<FsFigures>;
}

export interface ImageGcOptions {
  runtime: ImageGcRuntime;
  policy: ImageGcPolicy;
  periodMs: number;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  nodeRef: ObjectReference;
}

export class ImageGcManager {
  private readonly records = new Map<string, ImageRecord>();
  private initialized = false;
  private prevGcFailed = false;
  private running: Promise<void> | undefined;

  /** Throws on a policy upstream's NewImageGCManager refuses. */
  constructor(private readonly options: Readonly<ImageGcOptions>) {
    const err = policyError(options.policy);
    if (err) throw new ImageGcError(`failed to initialize image manager: ${err}`);
  }

  start(signal: AbortSignal): void {
    if (gcDisabled(this.options.policy)) this.options.logger.info('ImageGCHighThresholdPercent is set 100, Disable image GC');
    const onError = (err: unknown) => this.options.logger.error({ err: errorMessage(err) }, 'Image garbage collection loop failed');
    runPeriodically(() => this.runOnce(), {
      periodMs: this.options.periodMs,
      signal,
      clock: this.options.clock,
      immediate: true,
      onError,
    }).catch(onError);
  }

  /** One detection and (unless disabled) one collection; a run in progress is joined. */
  runOnce(): Promise<void> {
    this.running ??= this.tick().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Resolves when no run is in flight (for shutdown). */
  async idle(): Promise<void> {
    await this.running;
  }

  /** The records, for tests and debugging. */
  snapshot(): ReadonlyMap<string, Readonly<ImageRecord>> {
    return this.records;
  }

  private async tick(): Promise<void> {
    const { logger } = this.options;
    try {
      await this.detectImages(this.initialized ? this.options.clock.now() : 0);
      this.initialized = true;
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, '[imageGCManager] Failed to monitor images');
    }
    if (gcDisabled(this.options.policy)) return;
    try {
      await this.garbageCollect();
      if (this.prevGcFailed) logger.info('Image garbage collection succeeded');
      this.prevGcFailed = false;
    } catch (err) {
      const message = errorMessage(err);
      if (this.prevGcFailed) {
        logger.error({ err: message }, 'Image garbage collection failed multiple times in a row');
        this.options.recorder.record(this.options.nodeRef, 'Warning', 'ImageGCFailed', message);
      } else {
        logger.error({ err: message }, 'Image garbage collection failed once. Stats initialization may not have completed yet');
      }
      this.prevGcFailed = true;
    }
  }

  /** Upstream detectImages: returns the images in use. */
  private async detectImages(detectTime: number): Promise<Set<string>> {
    const [images, inUse] = await Promise.all([this.options.runtime.listImages(), this.options.runtime.imagesInUse()]);
    const added = updateRecords(this.records, images, inUse, detectTime, this.options.clock.now());
    if (added.length) this.options.logger.info({ images: added, firstDetected: detectTime }, '[imageGCManager] Detected new images');
    return inUse;
  }

  /** Upstream GarbageCollect. Rejects (after its event) when it cannot free enough. */
  async garbageCollect(): Promise<void> {
    const { policy, recorder, nodeRef, logger } = this.options;
    const verdict = assessUsage(await this.options.runtime.imageFsStats(), policy);
    if (verdict.kind === 'invalid-capacity') {
      const message = 'invalid capacity 0 on image filesystem';
      recorder.record(nodeRef, 'Warning', 'InvalidDiskCapacity', message);
      throw new ImageGcError(message);
    }
    if (verdict.kind === 'under') return;
    const { usagePercent, bytesToFree } = verdict;
    logger.info(
      { usagePercent, highThresholdPercent: policy.highThresholdPercent, lowThresholdPercent: policy.lowThresholdPercent, bytesToFree },
      `[imageGCManager]: Disk usage on image filesystem is at ${usagePercent}% which is over the high threshold (${policy.highThresholdPercent}%). Trying to free ${bytesToFree} bytes down to the low threshold (${policy.lowThresholdPercent}%).`,
    );
    const freed = await this.freeSpace(bytesToFree, this.options.clock.now());
    if (freed < bytesToFree) {
      const message = `failed to garbage collect required amount of images. Wanted to free ${bytesToFree} bytes, but freed ${freed} bytes`;
      recorder.record(nodeRef, 'Warning', 'FreeDiskSpaceFailed', message);
      throw new ImageGcError(message);
    }
  }

  /** Upstream DeleteUnusedImages (for the eviction manager): every unused image old enough to go. */
  async deleteUnusedImages(): Promise<void> {
    await this.freeSpace(Number.POSITIVE_INFINITY, this.options.clock.now());
  }

  /** Upstream freeSpace: removes in removalOrder until enough is freed, going on past failed removals. */
  private async freeSpace(bytesToFree: number, freeTime: number): Promise<number> {
    const inUse = await this.detectImages(freeTime);
    const errors: string[] = [];
    let freed = 0;
    for (const image of removalOrder(this.records, inUse, freeTime, this.options.policy.minAgeMs)) {
      this.options.logger.info(
        { image: image.id, size: image.size },
        `[imageGCManager]: Removing image "${image.id}" to free ${image.size} bytes`,
      );
      try {
        await this.options.runtime.removeImage(image.id);
      } catch (err) {
        errors.push(errorMessage(err));
        continue;
      }
      this.records.delete(image.id);
      freed += image.size;
      if (freed >= bytesToFree) break;
    }
    if (errors.length) {
      throw new ImageGcError(
        `wanted to free ${bytesToFree} bytes, but freed ${freed} bytes space with errors in image deletion: [${errors.join(', ')}]`,
      );
    }
    return freed;
  }
}
