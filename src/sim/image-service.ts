/**
 * gRPC handlers of the simulated ImageService (containerd semantics):
 *  - ImageStatus of an unknown image answers with no image and no error;
 *  - RemoveImage of an unknown image succeeds;
 *  - ListImages ignores its filter (containerd 1.6 does too);
 *  - PullImage answers the image id as image_ref after the pull latency, or
 *    fails with code UNKNOWN and containerd's registry-resolution message.
 */
import { status } from '@grpc/grpc-js';
import { CriError } from '../common/errors.js';
import type { ImageServiceServer } from '../cri/grpc-service.js';
import { sampleLatency, type LatencySpec } from './faults.js';
import { InvalidReferenceError, toCriImage, type ImageStore } from './images.js';
import { noInfo, unary, type RpcContext } from './rpc.js';

export interface ImageServiceDeps {
  images: ImageStore;
  ctx: RpcContext;
  nowNs: () => bigint;
  /** Latency of PullImage (success or failure), on top of any RPC fault latency. */
  pullLatency: () => LatencySpec | undefined;
  rand: () => number;
  sleep: (ms: number) => Promise<void>;
}

function resolveError(ref: string, err: unknown): never {
  if (err instanceof InvalidReferenceError) {
    throw new CriError(`failed to resolve image "${ref}": ${err.message}`, 'ImageStatus', status.UNKNOWN);
  }
  throw err;
}

export function createImageService(d: ImageServiceDeps): ImageServiceServer {
  const { images, ctx } = d;
  return {
    listImages: unary(ctx, 'ListImages', () => ({ images: images.list().map(toCriImage) })),

    imageStatus: unary(ctx, 'ImageStatus', (req) => {
      const ref = req.image?.image ?? '';
      let img;
      try {
        img = images.find(ref);
      } catch (err) {
        resolveError(ref, err);
      }
      if (!img) return { image: undefined, info: noInfo() };
      return {
        image: toCriImage(img),
        info: req.verbose ? { info: JSON.stringify({ chainID: img.id, imageSpec: { architecture: 'amd64', os: 'linux' } }) } : noInfo(),
      };
    }),

    pullImage: unary(ctx, 'PullImage', async (req) => {
      const ref = req.image?.image ?? '';
      let ok: boolean;
      try {
        ok = images.pullable(ref);
      } catch (err) {
        if (err instanceof InvalidReferenceError) throw new CriError(err.message, 'PullImage', status.UNKNOWN);
        throw err;
      }
      const latency = d.pullLatency();
      const ms = latency ? sampleLatency(latency, d.rand) : 0;
      if (ms > 0) await d.sleep(ms);
      if (!ok) throw images.pullError(ref);
      return { imageRef: images.completePull(ref).id };
    }),

    removeImage: unary(ctx, 'RemoveImage', (req) => {
      const ref = req.image?.image ?? '';
      try {
        images.remove(ref);
      } catch (err) {
        resolveError(ref, err);
      }
      return {};
    }),

    imageFsInfo: unary(ctx, 'ImageFsInfo', () => ({
      imageFilesystems: [
        {
          timestamp: d.nowNs(),
          fsId: { mountpoint: images.fsMountpoint },
          usedBytes: { value: images.usedBytes() },
          inodesUsed: { value: BigInt(images.size * 250) },
        },
      ],
      containerFilesystems: [],
    })),
  };
}
