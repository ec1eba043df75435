/**
 * Image GC's view of the runtime over CRI (the ImageGcRuntime seam of
 * image-gc-manager.ts):
 * - images: CRI ListImages through the shared image list (image-list-cache.ts);
 * - in use: the imageRef of every container ListContainers returns (any
 *   state, as upstream's GetPods(true)), plus the sandbox image. kubelet-ts
 *   sends no pod infra image (the runtime chooses it), so the sandbox image is
 *   the one the runtime reports in its verbose Status (containerd:
 *   info.config.sandboxImage), resolved to an id with ImageStatus; a runtime
 *   that reports none protects it with CRI Image.pinned instead;
 * - image fs: the first ImageFsInfo filesystem, with capacity and available
 *   bytes from statfs of its mountpoint, as upstream's CRI stats provider
 *   (cadvisor GetDirFsInfo). A mountpoint statfs cannot read gives capacity
 *   0, which GC reports as InvalidDiskCapacity, as upstream.
 */
import type { Logger } from 'pino';
import type { CriApi } from '../../cri/client.js';
import type { HostProbe } from '../host/host-probe.js';
import type { Clock } from '../../common/clock.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { nodeReference, type EventRecorder } from '../events/event-recorder.js';
import { ImageGcManager, type ImageGcRuntime } from './image-gc-manager.js';
import type { ImageListCache } from './image-list-cache.js';
import { errorMessage } from '../../common/error-message.js';

const TIMEOUT = { timeoutMs: 60_000 };

export interface CriImageGcDeps {
  cri: Pick<CriApi, 'listContainers' | 'status' | 'imageStatus' | 'removeImage' | 'imageFsInfo'>;
  imageList: Pick<ImageListCache, 'fetch'>;
  host: Pick<HostProbe, 'fsStats'>;
  logger: Logger;
}

/** The sandbox image name in a verbose CRI Status info map (containerd's config.sandboxImage), or ''. */
export function sandboxImageFromStatusInfo(info: Record<string, string>): string {
  try {
    const config = JSON.parse(info.config ?? '{}') as { sandboxImage?: unknown };
    return typeof config.sandboxImage === 'string' ? config.sandboxImage : '';
  } catch {
    return '';
  }
}

export function criImageGcRuntime(d: CriImageGcDeps): ImageGcRuntime {
  const sandboxImageId = async (): Promise<string> => {
    try {
      const { info } = await d.cri.status({ verbose: true }, TIMEOUT);
      const name = sandboxImageFromStatusInfo(info);
      if (!name) return '';
      const status = await d.cri.imageStatus({ image: { image: name } }, TIMEOUT);
      return status.image?.id ?? '';
    } catch (err) {
      d.logger.debug({ err: errorMessage(err) }, 'Could not resolve the sandbox image');
      return '';
    }
  };
  return {
    listImages: () => d.imageList.fetch(),
    async imagesInUse() {
      const [{ containers }, sandbox] = await Promise.all([d.cri.listContainers({}, TIMEOUT), sandboxImageId()]);
      const inUse = new Set(containers.map((c) => c.imageRef).filter(Boolean));
      if (sandbox) inUse.add(sandbox);
      return inUse;
    },
    async removeImage(id) {
      await d.cri.removeImage({ image: { image: id } }, TIMEOUT);
    },
    async imageFsStats() {
      const { imageFilesystems } = await d.cri.imageFsInfo({}, TIMEOUT);
      const mountpoint = imageFilesystems[0]?.fsId?.mountpoint;
      if (!mountpoint) throw new Error('imageFs information is unavailable');
      try {
        const s = d.host.fsStats(mountpoint);
        return { capacityBytes: s.capacityBytes, availableBytes: s.availableBytes };
      } catch (err) {
        d.logger.error({ err: errorMessage(err), mountpoint }, `Failed to get the info of the filesystem with mountpoint "${mountpoint}"`);
        return { capacityBytes: 0n, availableBytes: 0n };
      }
    },
  };
}

/** The agent's image GC manager over CRI (throws on a policy upstream refuses). */
export function createImageGc(
  d: Omit<CriImageGcDeps, 'logger'> & {
    config: Pick<
      KubeletConfig,
      'nodeName' | 'imageGCHighThresholdPercent' | 'imageGCLowThresholdPercent' | 'imageMinimumGCAge' | 'imageGcPeriod'
    >;
    clock: Clock;
    logger: Logger;
    recorder: EventRecorder;
  },
): ImageGcManager {
  const logger = d.logger.child({ component: 'image-gc' });
  const c = d.config;
  return new ImageGcManager({
    runtime: criImageGcRuntime({ cri: d.cri, imageList: d.imageList, host: d.host, logger }),
    policy: {
      highThresholdPercent: c.imageGCHighThresholdPercent,
      lowThresholdPercent: c.imageGCLowThresholdPercent,
      minAgeMs: c.imageMinimumGCAge,
    },
    periodMs: c.imageGcPeriod,
    clock: d.clock,
    logger,
    recorder: d.recorder,
    nodeRef: nodeReference(c.nodeName),
  });
}
