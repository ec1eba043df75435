/**
 * Builds CRI messages from the store's records, the way containerd's
 * toCRIContainer / toCRIContainerStatus / toCRISandbox / toCRISandboxStatus do:
 *  - ListContainers' image_ref is the image id; ContainerStatus reports the
 *    image's first repo tag as image and its first repo digest as image_ref.
 *  - an EXITED container without a reason gets "Completed" (exit 0) or "Error".
 *  - a host-network sandbox, or one whose network is torn down, has no IP.
 *
 * List items are encoded once per change and cached on the record
 * (`listEntry`), so a 10k-container ListContainers is a buffer concatenation.
 */
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import {
  Container,
  ContainerState,
  NamespaceMode,
  PodSandbox,
  type ContainerStatus,
  type PodSandboxStatus,
} from '../gen/runtime/v1/api.js';
import type { ContainerRecord, SandboxRecord } from './store.js';

export const REASON_COMPLETED = 'Completed';
export const REASON_ERROR = 'Error';

export function exitReason(exitCode: number): string {
  return exitCode === 0 ? REASON_COMPLETED : REASON_ERROR;
}

export function toListContainer(c: ContainerRecord): Container {
  return {
    id: c.id,
    podSandboxId: c.sandboxId,
    metadata: c.config.metadata,
    image: c.config.image,
    imageRef: c.image.id,
    state: c.state,
    createdAt: c.createdAt,
    labels: c.config.labels,
    annotations: c.config.annotations,
    imageId: c.image.id,
  };
}

export function toContainerStatus(c: ContainerRecord): ContainerStatus {
  const spec = c.config.image;
  return {
    id: c.id,
    metadata: c.config.metadata,
    state: c.state,
    createdAt: c.createdAt,
    startedAt: c.startedAt,
    finishedAt: c.finishedAt,
    exitCode: c.exitCode,
    image: {
      image: c.image.repoTag || spec?.image || '',
      annotations: spec?.annotations ?? {},
      userSpecifiedImage: spec?.userSpecifiedImage ?? '',
      runtimeHandler: spec?.runtimeHandler ?? '',
      imageRef: '',
    },
    imageRef: c.image.repoDigest || c.image.id,
    reason: c.state === ContainerState.CONTAINER_EXITED && c.reason === '' ? exitReason(c.exitCode) : c.reason,
    message: c.message,
    labels: c.config.labels,
    annotations: c.config.annotations,
    mounts: c.config.mounts,
    logPath: c.logPath,
    resources: c.config.linux?.resources ? { linux: c.config.linux.resources } : undefined,
    imageId: c.image.id,
    user: undefined,
    stopSignal: c.config.stopSignal,
  };
}

export function toListSandbox(s: SandboxRecord): PodSandbox {
  return {
    id: s.id,
    metadata: s.config.metadata,
    state: s.state,
    createdAt: s.createdAt,
    labels: s.config.labels,
    annotations: s.config.annotations,
    runtimeHandler: s.runtimeHandler,
  };
}

export function toSandboxStatus(s: SandboxRecord): PodSandboxStatus {
  const ns = s.config.linux?.securityContext?.namespaceOptions;
  return {
    id: s.id,
    metadata: s.config.metadata,
    state: s.state,
    createdAt: s.createdAt,
    network: { ip: s.ip, additionalIps: [] },
    linux: {
      namespaces: {
        options: {
          network: ns?.network ?? NamespaceMode.POD,
          pid: ns?.pid ?? NamespaceMode.POD,
          ipc: ns?.ipc ?? NamespaceMode.POD,
          targetId: ns?.targetId ?? '',
          usernsOptions: ns?.usernsOptions,
        },
      },
    },
    labels: s.config.labels,
    annotations: s.config.annotations,
    runtimeHandler: s.runtimeHandler,
  };
}

/** Field 1 (length-delimited) of ListContainersResponse / ListPodSandboxResponse. */
const ITEM_TAG = (1 << 3) | 2;

export function containerListEntry(c: ContainerRecord): Uint8Array {
  return (c.listEntry ??= Container.encode(toListContainer(c), new BinaryWriter().uint32(ITEM_TAG).fork()).join().finish());
}

export function sandboxListEntry(s: SandboxRecord): Uint8Array {
  return (s.listEntry ??= PodSandbox.encode(toListSandbox(s), new BinaryWriter().uint32(ITEM_TAG).fork()).join().finish());
}

/**
 * A response that is already protobuf-encoded. The sim's service definition
 * (runtime-service.ts) passes it through its response serializer untouched.
 */
export class PreEncoded {
  constructor(readonly bytes: Buffer) {}

  static concat(entries: readonly Uint8Array[]): PreEncoded {
    let n = 0;
    for (const e of entries) n += e.length;
    return new PreEncoded(Buffer.concat(entries, n));
  }
}
