/**
 * A CSI driver's Node service over its unix socket (upstream pkg/volume/csi
 * csi_client.go): the calls the kubelet makes, promise-based, each with a
 * deadline (upstream csiTimeout, 2 min).
 *
 * Contracts:
 *  - The endpoint is the one the driver registered (`unix:///path` or a bare
 *    absolute path); the client knows nothing else about the driver.
 *  - A failed call rejects with upstream's gRPC status text
 *    ("rpc error: code = Internal desc = ..."), which callers put in events.
 *  - The channel is closed by close(); a client is cheap to make per call
 *    sequence, as upstream makes one per operation.
 */
import * as grpc from '@grpc/grpc-js';
import {
  NodeClient,
  NodeServiceCapability_RPC_Type,
  VolumeCapability_AccessMode_Mode,
  type NodeGetCapabilitiesResponse,
  type NodeGetInfoResponse,
  type NodePublishVolumeRequest,
  type NodeStageVolumeRequest,
} from '../../../gen/csi/v1/csi.js';
import { rpcErrorMessage } from '../../../common/rpc-error.js';

/** upstream csiTimeout. */
export const CSI_TIMEOUT_MS = 2 * 60_000;

export interface CsiNodeInfo {
  nodeId: string;
  maxVolumesPerNode: number;
  topology: Record<string, string>;
}

export type CsiStageRequest = Pick<
  NodeStageVolumeRequest,
  'volumeId' | 'publishContext' | 'stagingTargetPath' | 'volumeCapability' | 'secrets' | 'volumeContext'
>;
export type CsiPublishRequest = Pick<
  NodePublishVolumeRequest,
  'volumeId' | 'publishContext' | 'stagingTargetPath' | 'targetPath' | 'volumeCapability' | 'readonly' | 'secrets' | 'volumeContext'
>;

/** The seam between the CSI volume plugin and a driver (a fake in unit tests). */
export interface CsiNodeClient {
  nodeGetInfo(): Promise<CsiNodeInfo>;
  /** The driver reports the STAGE_UNSTAGE_VOLUME node capability. */
  nodeSupportsStageUnstage(): Promise<boolean>;
  nodeStageVolume(req: CsiStageRequest): Promise<void>;
  nodeUnstageVolume(volumeId: string, stagingTargetPath: string): Promise<void>;
  nodePublishVolume(req: CsiPublishRequest): Promise<void>;
  nodeUnpublishVolume(volumeId: string, targetPath: string): Promise<void>;
  close(): void;
}

/** Makes a client for a registered driver's endpoint. */
export type CsiClientFactory = (endpoint: string) => CsiNodeClient;

/** The grpc-js target of a registered endpoint (upstream accepts `unix://` URLs and bare paths). */
export function csiTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint.startsWith('unix:///') ? endpoint : `unix:///${endpoint.slice(7)}`;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new Error(`CSI endpoint ${JSON.stringify(endpoint)} is not a unix socket path`);
}

/** The CSI access mode of a PV's first access mode (upstream asCSIAccessMode). */
export function csiAccessMode(k8sMode: string | undefined): VolumeCapability_AccessMode_Mode {
  switch (k8sMode) {
    case 'ReadWriteOnce':
      return VolumeCapability_AccessMode_Mode.SINGLE_NODE_WRITER;
    case 'ReadOnlyMany':
      return VolumeCapability_AccessMode_Mode.MULTI_NODE_READER_ONLY;
    case 'ReadWriteMany':
      return VolumeCapability_AccessMode_Mode.MULTI_NODE_MULTI_WRITER;
    default:
      return VolumeCapability_AccessMode_Mode.UNKNOWN;
  }
}

type Callback<Res> = (err: grpc.ServiceError | null, res: Res) => void;

/** The CSI Node client over grpc-js. */
export function grpcCsiClient(endpoint: string, timeoutMs = CSI_TIMEOUT_MS): CsiNodeClient {
  const client = new NodeClient(csiTarget(endpoint), grpc.credentials.createInsecure());
  /** One unary call: `invoke` starts it with the metadata, the deadline and the callback. */
  const call = <Res>(invoke: (md: grpc.Metadata, opts: Partial<grpc.CallOptions>, cb: Callback<Res>) => unknown): Promise<Res> =>
    new Promise((resolve, reject) => {
      invoke(new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) =>
        err ? reject(new Error(rpcErrorMessage(err), { cause: err })) : resolve(res),
      );
    });
  const base = { publishContext: {}, secrets: {}, volumeContext: {} };
  return {
    async nodeGetInfo() {
      const res = await call<NodeGetInfoResponse>((md, opts, cb) => client.nodeGetInfo({}, md, opts, cb));
      return { nodeId: res.nodeId, maxVolumesPerNode: Number(res.maxVolumesPerNode), topology: res.accessibleTopology?.segments ?? {} };
    },
    async nodeSupportsStageUnstage() {
      const res = await call<NodeGetCapabilitiesResponse>((md, opts, cb) => client.nodeGetCapabilities({}, md, opts, cb));
      return res.capabilities.some((c) => c.rpc?.type === NodeServiceCapability_RPC_Type.STAGE_UNSTAGE_VOLUME);
    },
    async nodeStageVolume(req) {
      await call((md, opts, cb) => client.nodeStageVolume({ ...base, ...req }, md, opts, cb));
    },
    async nodeUnstageVolume(volumeId, stagingTargetPath) {
      await call((md, opts, cb) => client.nodeUnstageVolume({ volumeId, stagingTargetPath }, md, opts, cb));
    },
    async nodePublishVolume(req) {
      await call((md, opts, cb) => client.nodePublishVolume({ ...base, ...req }, md, opts, cb));
    },
    async nodeUnpublishVolume(volumeId, targetPath) {
      await call((md, opts, cb) => client.nodeUnpublishVolume({ volumeId, targetPath }, md, opts, cb));
    },
    close: () => client.close(),
  };
}
