import * as grpc from '@grpc/grpc-js';
import * as api from '../gen/runtime/v1/api.js';
import { CriDeadlineError, CriError, CriInvalidArgumentError, CriNotFoundError, CriUnavailableError } from '../common/errors.js';
import { parseEndpoint } from './endpoint.js';
import { IMAGE_OPERATIONS, RUNTIME_OPERATIONS, type ImageMethod, type OperationType, type RuntimeMethod } from './operations.js';

/** The upstream kubelet's CRI message limit (both directions). */
export const MAX_MSG_SIZE = 16 * 1024 * 1024;
/** Upstream default of runtimeRequestTimeout. */
export const DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS = 2 * 60 * 1000;

type Definitions = typeof api.RuntimeServiceService & typeof api.ImageServiceService;
type StreamingMethod = 'getContainerEvents';
export type UnaryMethod = Exclude<RuntimeMethod | ImageMethod, StreamingMethod>;
export type CriRequest<K extends keyof Definitions> = Parameters<Definitions[K]['requestSerialize']>[0];
export type CriResponse<K extends keyof Definitions> = ReturnType<Definitions[K]['responseDeserialize']>;

export interface CriCallOptions {
  /** Overrides the client's runtimeRequestTimeout for this call. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Called once per finished call with its upstream operation_type, duration and
 * the mapped error (undefined on success). Metrics hang off this hook; it must
 * not throw and must be cheap (it runs on every CRI call).
 */
export type CriCallObserver = (operation: OperationType, seconds: number, error: CriError | undefined) => void;

/** One promise-returning method per unary CRI RPC; requests may omit default-valued fields. */
export type CriApi = {
  [K in UnaryMethod]: (request?: api.DeepPartial<CriRequest<K>>, options?: CriCallOptions) => Promise<CriResponse<K>>;
} & {
  /** A unary call whose raw response bytes `decode` turns into the result (see CriClientBase.callDecoded). */
  callDecoded<K extends UnaryMethod, T>(
    method: K,
    decode: (bytes: Buffer) => T,
    request?: api.DeepPartial<CriRequest<K>>,
    options?: CriCallOptions,
  ): Promise<T>;
};

export interface CriClientOptions {
  /** e.g. unix:///run/containerd/containerd.sock */
  runtimeEndpoint: string;
  /** Defaults to runtimeEndpoint (then one channel serves both services). */
  imageEndpoint?: string;
  /** Deadline of every unary call, ms (runtimeRequestTimeout). */
  timeoutMs?: number;
  observer?: CriCallObserver;
}

interface MessageCodec {
  fromPartial(object: unknown): unknown;
  encode(message: unknown): { finish(): Uint8Array };
}

/** Request codecs by method: requests are built with fromPartial so callers may omit defaults. */
const REQUESTS: { [K in RuntimeMethod | ImageMethod]: MessageCodec } = {
  version: api.VersionRequest,
  status: api.StatusRequest,
  runPodSandbox: api.RunPodSandboxRequest,
  stopPodSandbox: api.StopPodSandboxRequest,
  removePodSandbox: api.RemovePodSandboxRequest,
  podSandboxStatus: api.PodSandboxStatusRequest,
  listPodSandbox: api.ListPodSandboxRequest,
  createContainer: api.CreateContainerRequest,
  startContainer: api.StartContainerRequest,
  stopContainer: api.StopContainerRequest,
  removeContainer: api.RemoveContainerRequest,
  listContainers: api.ListContainersRequest,
  containerStatus: api.ContainerStatusRequest,
  execSync: api.ExecSyncRequest,
  containerStats: api.ContainerStatsRequest,
  listContainerStats: api.ListContainerStatsRequest,
  podSandboxStats: api.PodSandboxStatsRequest,
  listPodSandboxStats: api.ListPodSandboxStatsRequest,
  updateRuntimeConfig: api.UpdateRuntimeConfigRequest,
  reopenContainerLog: api.ReopenContainerLogRequest,
  getContainerEvents: api.GetEventsRequest,
  listImages: api.ListImagesRequest,
  imageStatus: api.ImageStatusRequest,
  pullImage: api.PullImageRequest,
  removeImage: api.RemoveImageRequest,
  imageFsInfo: api.ImageFsInfoRequest,
};

interface UnaryCall {
  channel: grpc.Client;
  path: string;
  serialize: (request: unknown) => Buffer;
  operation: OperationType;
}

const identity = (bytes: Buffer): Buffer => bytes;

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': MAX_MSG_SIZE,
  'grpc.max_send_message_length': MAX_MSG_SIZE,
};

/** Maps a gRPC status error to the project's error classes, keeping the code. */
export function mapGrpcError(operation: string, err: unknown): CriError {
  const e = err as Partial<grpc.ServiceError>;
  const code = typeof e.code === 'number' ? e.code : grpc.status.UNKNOWN;
  const details = e.details ?? (err instanceof Error ? err.message : String(err));
  const message = `${operation}: rpc error: code = ${grpc.status[code] ?? code} desc = ${details}`;
  switch (code) {
    case grpc.status.NOT_FOUND:
      return new CriNotFoundError(message, operation, code, { cause: err });
    case grpc.status.UNAVAILABLE:
      return new CriUnavailableError(message, operation, code, { cause: err });
    case grpc.status.DEADLINE_EXCEEDED:
      return new CriDeadlineError(message, operation, code, { cause: err });
    case grpc.status.INVALID_ARGUMENT:
      return new CriInvalidArgumentError(message, operation, code, { cause: err });
    default:
      return new CriError(message, operation, code, { cause: err });
  }
}

/**
 * The gRPC status message of a failed call (upstream grpcstatus.FromError(err).Message()):
 * the runtime's `desc` text without the operation and code prefix. Any other
 * error gives its own message.
 */
export function criStatusMessage(err: unknown): string {
  if (err instanceof CriError) {
    const details = (err.cause as { details?: unknown } | undefined)?.details;
    if (typeof details === 'string') return details;
    const desc = / desc = ([\s\S]*)$/.exec(err.message);
    if (desc) return desc[1];
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * A typed, promise-based CRI client over grpc-js. One instance holds one
 * channel per distinct endpoint; each worker thread owns its own instance.
 * Every unary call carries a deadline; errors are CriError subclasses.
 * The constructor defines one method per unary RPC of CriApi (see the
 * `CriClient` export below, which adds those methods to the type).
 */
class CriClientBase {
  readonly runtimeEndpoint: string;
  readonly imageEndpoint: string;
  private readonly runtime: grpc.Client;
  private readonly image: grpc.Client;
  private readonly timeoutMs: number;
  private readonly observer: CriCallObserver | undefined;
  private readonly calls = new Map<UnaryMethod, UnaryCall>();

  constructor(options: CriClientOptions) {
    const runtimeTarget = parseEndpoint(options.runtimeEndpoint);
    const imageTarget = parseEndpoint(options.imageEndpoint ?? options.runtimeEndpoint);
    this.runtimeEndpoint = runtimeTarget.endpoint;
    this.imageEndpoint = imageTarget.endpoint;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS;
    this.observer = options.observer;
    const creds = grpc.credentials.createInsecure();
    this.runtime = new grpc.Client(runtimeTarget.grpcTarget, creds, CHANNEL_OPTIONS);
    this.image =
      imageTarget.socketPath === runtimeTarget.socketPath
        ? new grpc.Client(imageTarget.grpcTarget, creds, { ...CHANNEL_OPTIONS, channelOverride: this.runtime.getChannel() })
        : new grpc.Client(imageTarget.grpcTarget, creds, CHANNEL_OPTIONS);
    for (const method of Object.keys(RUNTIME_OPERATIONS) as RuntimeMethod[]) {
      if (method !== 'getContainerEvents')
        this.defineUnary(method, this.runtime, api.RuntimeServiceService[method], RUNTIME_OPERATIONS[method]);
    }
    for (const method of Object.keys(IMAGE_OPERATIONS) as ImageMethod[]) {
      this.defineUnary(method, this.image, api.ImageServiceService[method], IMAGE_OPERATIONS[method]);
    }
  }

  private defineUnary(
    method: UnaryMethod,
    channel: grpc.Client,
    def: { path: string; responseDeserialize: (b: Buffer) => unknown },
    operation: OperationType,
  ): void {
    const codec = REQUESTS[method];
    const serialize = (partial: unknown): Buffer => Buffer.from(codec.encode(codec.fromPartial(partial ?? {})).finish());
    this.calls.set(method, { channel, path: def.path, serialize, operation });
    const call = (request?: unknown, options?: CriCallOptions): Promise<unknown> =>
      this.invoke(method, def.responseDeserialize, request, options);
    (this as unknown as Record<string, unknown>)[method] = call;
  }

  /**
   * One unary call whose response bytes are decoded by `decode` instead of
   * the generated decoder (the relist's partial decode of its two lists).
   * Deadline, cancellation, metrics and error mapping are the same as the
   * typed methods'; a `decode` that throws fails the call with a CriError of
   * code INTERNAL carrying the decoder's message.
   */
  callDecoded<K extends UnaryMethod, T>(
    method: K,
    decode: (bytes: Buffer) => T,
    request?: api.DeepPartial<CriRequest<K>>,
    options?: CriCallOptions,
  ): Promise<T> {
    return this.invoke(method, decode, request, options);
  }

  private invoke<T>(method: UnaryMethod, decode: (bytes: Buffer) => T, request: unknown, options: CriCallOptions | undefined): Promise<T> {
    const { channel, path, serialize, operation } = this.calls.get(method)!;
    return new Promise((resolve, reject) => {
      const start = performance.now();
      const signal = options?.signal;
      if (signal?.aborted) {
        reject(mapGrpcError(operation, { code: grpc.status.CANCELLED, details: `cancelled: ${String(signal.reason)}` }));
        return;
      }
      const deadline = new Date(Date.now() + (options?.timeoutMs ?? this.timeoutMs));
      const onAbort = () => pending.cancel();
      const pending = channel.makeUnaryRequest(
        path,
        serialize,
        identity,
        request ?? {},
        new grpc.Metadata(),
        { deadline },
        (err, bytes) => {
          signal?.removeEventListener('abort', onAbort);
          let response: T | undefined;
          let failure: unknown = err;
          if (!err) {
            try {
              response = decode(bytes!);
            } catch (decodeErr) {
              failure = { code: grpc.status.INTERNAL, details: decodeErr instanceof Error ? decodeErr.message : String(decodeErr) };
            }
          }
          const seconds = (performance.now() - start) / 1000;
          if (failure) {
            const mapped = mapGrpcError(operation, failure);
            this.observer?.(operation, seconds, mapped);
            reject(mapped);
          } else {
            this.observer?.(operation, seconds, undefined);
            resolve(response as T);
          }
        },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Opens the GetContainerEvents stream (evented PLEG). Long-lived: no
   * deadline. Iterate the returned stream; call cancel() to end it. Errors
   * surface from the iterator as CriError.
   */
  getContainerEvents(): { events: AsyncIterable<api.ContainerEventResponse>; cancel(): void } {
    const def = api.RuntimeServiceService.getContainerEvents;
    const operation = RUNTIME_OPERATIONS.getContainerEvents;
    const start = performance.now();
    const stream = this.runtime.makeServerStreamRequest(
      def.path,
      (m: api.GetEventsRequest) => Buffer.from(api.GetEventsRequest.encode(m).finish()),
      def.responseDeserialize,
      api.GetEventsRequest.fromPartial({}),
      new grpc.Metadata(),
    );
    this.observer?.(operation, (performance.now() - start) / 1000, undefined);
    async function* iterate(): AsyncGenerator<api.ContainerEventResponse> {
      try {
        for await (const event of stream) yield event as api.ContainerEventResponse;
      } catch (err) {
        throw mapGrpcError(operation, err);
      }
    }
    return { events: iterate(), cancel: () => stream.cancel() };
  }

  /** Resolves when the runtime channel is connected, or rejects after timeoutMs. */
  waitForReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.runtime.waitForReady(new Date(Date.now() + timeoutMs), (err) =>
        err
          ? reject(mapGrpcError('connect', { code: grpc.status.UNAVAILABLE, details: `${this.runtimeEndpoint}: ${err.message}` }))
          : resolve(),
      );
    });
  }

  close(): void {
    this.image.close();
    this.runtime.close();
  }
}

/** The client type: the class's own members plus the CriApi methods its constructor defines. */
export type CriClient = CriClientBase & CriApi;
export const CriClient = CriClientBase as new (options: CriClientOptions) => CriClient;
