import type * as grpc from '@grpc/grpc-js';
import * as api from '../gen/runtime/v1/api.js';
import { CriDeadlineError, CriError, CriInvalidArgumentError, CriNotFoundError, CriUnavailableError } from '../common/errors.js';
import { errorMessage } from '../common/error-message.js';
import { GrpcStatus, grpcStatusName } from '../common/rpc-error.js';
import { parseEndpoint } from './endpoint.js';
import { H2Channel } from './h2-channel.js';
import { IMAGE_OPERATIONS, RUNTIME_OPERATIONS, type ImageMethod, type OperationType, type RuntimeMethod } from './operations.js';

/** The upstream kubelet's CRI message limit (both directions). */
export const MAX_MSG_SIZE = 16 * 1024 * 1024;
/** Upstream default of runtimeRequestTimeout. */
export const DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS = 2 * 60 * 1000;

type Methods = typeof api.RuntimeServiceDefinition.methods & typeof api.ImageServiceDefinition.methods;
type StreamingMethod = 'getContainerEvents';
export type UnaryMethod = Exclude<RuntimeMethod | ImageMethod, StreamingMethod>;
export type CriRequest<K extends keyof Methods> = Parameters<Methods[K]['requestType']['encode']>[0];
export type CriResponse<K extends keyof Methods> = ReturnType<Methods[K]['responseType']['decode']>;

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

/** A method of the generated service definitions: its name and message codecs. */
interface MethodDefinition {
  name: string;
  requestType: MessageCodec;
  responseType: { decode(bytes: Uint8Array): unknown };
}

/** The HTTP/2 path of a method of a generated service definition: `/runtime.v1.RuntimeService/Version`. */
export function methodPath(service: { fullName: string }, method: { name: string }): string {
  return `/${service.fullName}/${method.name}`;
}

/** The methods of a service (the generated generic definition), by key, with their HTTP/2 paths. */
function methodsWithPaths(service: {
  fullName: string;
  methods: Record<string, MethodDefinition>;
}): Map<string, MethodDefinition & { path: string }> {
  return new Map(Object.entries(service.methods).map(([key, m]) => [key, { ...m, path: methodPath(service, m) }]));
}

interface UnaryCall {
  channel: H2Channel;
  path: string;
  serialize: (request: unknown) => Buffer;
  operation: OperationType;
}

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': MAX_MSG_SIZE,
  'grpc.max_send_message_length': MAX_MSG_SIZE,
};

/** Maps a gRPC status error to the project's error classes, keeping the code. */
export function mapGrpcError(operation: string, err: unknown): CriError {
  const e = err as Partial<grpc.ServiceError>;
  const code: number = typeof e.code === 'number' ? e.code : GrpcStatus.UNKNOWN;
  const details = e.details ?? errorMessage(err);
  const message = `${operation}: rpc error: code = ${grpcStatusName(code) ?? code} desc = ${details}`;
  switch (code) {
    case GrpcStatus.NOT_FOUND:
      return new CriNotFoundError(message, operation, code, { cause: err });
    case GrpcStatus.UNAVAILABLE:
      return new CriUnavailableError(message, operation, code, { cause: err });
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new CriDeadlineError(message, operation, code, { cause: err });
    case GrpcStatus.INVALID_ARGUMENT:
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
  return errorMessage(err);
}

/**
 * A typed, promise-based CRI client. Unary calls go over an {@link H2Channel}
 * (one HTTP/2 session per distinct endpoint); the GetContainerEvents server
 * stream over a grpc-js client opened on first use. Each worker thread owns
 * its own instance. Every unary call carries a deadline; errors are CriError
 * subclasses. The constructor defines one method per unary RPC of CriApi
 * (see the `CriClient` export below, which adds those methods to the type).
 */
class CriClientBase {
  readonly runtimeEndpoint: string;
  readonly imageEndpoint: string;
  private readonly runtime: H2Channel;
  private readonly image: H2Channel;
  private readonly runtimeTarget: string;
  private streams: grpc.Client | undefined;
  private readonly timeoutMs: number;
  private readonly observer: CriCallObserver | undefined;
  private readonly calls = new Map<UnaryMethod, UnaryCall>();

  constructor(options: CriClientOptions) {
    const runtimeTarget = parseEndpoint(options.runtimeEndpoint);
    const imageTarget = parseEndpoint(options.imageEndpoint ?? options.runtimeEndpoint);
    this.runtimeEndpoint = runtimeTarget.endpoint;
    this.imageEndpoint = imageTarget.endpoint;
    this.runtimeTarget = runtimeTarget.grpcTarget;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS;
    this.observer = options.observer;
    this.runtime = new H2Channel({ socketPath: runtimeTarget.socketPath, maxMessageBytes: MAX_MSG_SIZE });
    this.image =
      imageTarget.socketPath === runtimeTarget.socketPath
        ? this.runtime
        : new H2Channel({ socketPath: imageTarget.socketPath, maxMessageBytes: MAX_MSG_SIZE });
    const runtimeMethods = methodsWithPaths(api.RuntimeServiceDefinition);
    for (const method of Object.keys(RUNTIME_OPERATIONS) as RuntimeMethod[]) {
      if (method !== 'getContainerEvents') this.defineUnary(method, this.runtime, runtimeMethods.get(method)!, RUNTIME_OPERATIONS[method]);
    }
    const imageMethods = methodsWithPaths(api.ImageServiceDefinition);
    for (const method of Object.keys(IMAGE_OPERATIONS) as ImageMethod[]) {
      this.defineUnary(method, this.image, imageMethods.get(method)!, IMAGE_OPERATIONS[method]);
    }
  }

  private defineUnary(method: UnaryMethod, channel: H2Channel, def: MethodDefinition & { path: string }, operation: OperationType): void {
    const codec = def.requestType;
    const decode = (bytes: Buffer) => def.responseType.decode(bytes);
    const serialize = (partial: unknown): Buffer => {
      const bytes = codec.encode(codec.fromPartial(partial ?? {})).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength); // a view: the channel copies it into its frame
    };
    this.calls.set(method, { channel, path: def.path, serialize, operation });
    const call = (request?: unknown, options?: CriCallOptions): Promise<unknown> => this.invoke(method, decode, request, options);
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

  private async invoke<T>(
    method: UnaryMethod,
    decode: (bytes: Buffer) => T,
    request: unknown,
    options: CriCallOptions | undefined,
  ): Promise<T> {
    const { channel, path, serialize, operation } = this.calls.get(method)!;
    const start = performance.now();
    let failure: unknown;
    try {
      const bytes = await channel.unary(path, serialize(request ?? {}), {
        timeoutMs: options?.timeoutMs ?? this.timeoutMs,
        signal: options?.signal,
      });
      try {
        const response = decode(bytes);
        this.observer?.(operation, (performance.now() - start) / 1000, undefined);
        return response;
      } catch (decodeErr) {
        failure = { code: GrpcStatus.INTERNAL, details: errorMessage(decodeErr) };
      }
    } catch (err) {
      failure = err;
    }
    const mapped = mapGrpcError(operation, failure);
    this.observer?.(operation, (performance.now() - start) / 1000, mapped);
    throw mapped;
  }

  /**
   * Opens the GetContainerEvents stream (evented PLEG). Long-lived: no
   * deadline. Iterate the returned stream; call cancel() to end it. Errors
   * surface from the iterator as CriError. grpc-js, which carries the stream,
   * is loaded at the first iteration: threads that never open it never load it.
   */
  getContainerEvents(): { events: AsyncIterable<api.ContainerEventResponse>; cancel(): void } {
    const service = api.RuntimeServiceDefinition;
    const method = service.methods.getContainerEvents;
    const operation = RUNTIME_OPERATIONS.getContainerEvents;
    let stream: grpc.ClientReadableStream<api.ContainerEventResponse> | undefined;
    let cancelled = false;
    const open = async () => {
      const grpcJs = await import('@grpc/grpc-js');
      const start = performance.now();
      this.streams ??= new grpcJs.Client(this.runtimeTarget, grpcJs.credentials.createInsecure(), CHANNEL_OPTIONS);
      stream = this.streams.makeServerStreamRequest(
        methodPath(service, method),
        (m: api.GetEventsRequest) => Buffer.from(method.requestType.encode(m).finish()),
        (b: Buffer) => method.responseType.decode(b),
        method.requestType.fromPartial({}),
        new grpcJs.Metadata(),
      );
      this.observer?.(operation, (performance.now() - start) / 1000, undefined);
      if (cancelled) stream.cancel();
      return stream;
    };
    async function* iterate(): AsyncGenerator<api.ContainerEventResponse> {
      try {
        for await (const event of await open()) yield event as api.ContainerEventResponse;
      } catch (err) {
        throw mapGrpcError(operation, err);
      }
    }
    return {
      events: iterate(),
      cancel: () => {
        cancelled = true;
        stream?.cancel();
      },
    };
  }

  /** Resolves when the runtime endpoint accepts a connection, or rejects after timeoutMs. */
  async waitForReady(timeoutMs: number): Promise<void> {
    try {
      await this.runtime.waitForReady(timeoutMs);
    } catch (err) {
      throw mapGrpcError('connect', { code: GrpcStatus.UNAVAILABLE, details: `${this.runtimeEndpoint}: ${errorMessage(err)}` });
    }
  }

  close(): void {
    this.streams?.close();
    this.image.close();
    this.runtime.close();
  }
}

/** The client type: the class's own members plus the CriApi methods its constructor defines. */
export type CriClient = CriClientBase & CriApi;
export const CriClient = CriClientBase as new (options: CriClientOptions) => CriClient;
