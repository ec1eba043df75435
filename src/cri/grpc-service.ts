/**
 * grpc-js service definitions, server and client types of the CRI services,
 * made from the generated generic definitions. The generated code carries no
 * grpc-js: the agent's unary calls go over its own HTTP/2 channel, so only
 * code that runs a grpc-js server or client (the simulated runtime, tests,
 * benchmarks) imports this module and loads grpc-js.
 */
import {
  makeGenericClientConstructor,
  type CallOptions,
  type ChannelCredentials,
  type Client,
  type ClientOptions,
  type ClientReadableStream,
  type ClientUnaryCall,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type Metadata,
  type MethodDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import * as api from '../gen/runtime/v1/api.js';
import { methodPath } from './client.js';

interface Codec<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(bytes: Uint8Array): T;
}

interface GenericMethod<Req, Res> {
  name: string;
  requestType: Codec<Req>;
  requestStream: boolean;
  responseType: Codec<Res>;
  responseStream: boolean;
}

/** A generic definition's methods as grpc-js method definitions, by the same keys. */
export type GrpcService<M> = {
  [K in keyof M]: M[K] extends GenericMethod<infer Req, infer Res> ? MethodDefinition<Req, Res> : never;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each method has its own message types
export function grpcService<M extends Record<string, GenericMethod<any, any>>>(service: { fullName: string; methods: M }): GrpcService<M> {
  const out: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const [key, m] of Object.entries(service.methods) as [string, GenericMethod<unknown, unknown>][]) {
    out[key] = {
      path: methodPath(service, m),
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestSerialize: (value: unknown) => Buffer.from(m.requestType.encode(value).finish()),
      requestDeserialize: (bytes: Buffer) => m.requestType.decode(bytes),
      responseSerialize: (value: unknown) => Buffer.from(m.responseType.encode(value).finish()),
      responseDeserialize: (bytes: Buffer) => m.responseType.decode(bytes),
    };
  }
  return out as GrpcService<M>;
}

/** A server's handlers for a generic definition's methods (grpc-js's addService implementation). */
export type GrpcServer<M> = UntypedServiceImplementation & {
  [K in keyof M]: M[K] extends GenericMethod<infer Req, infer Res>
    ? M[K] extends { responseStream: true }
      ? handleServerStreamingCall<Req, Res>
      : handleUnaryCall<Req, Res>
    : never;
};

type Callback<Res> = (error: ServiceError | null, response: Res) => void;
interface UnaryClientMethod<Req, Res> {
  (request: Req, callback: Callback<Res>): ClientUnaryCall;
  (request: Req, metadata: Metadata, callback: Callback<Res>): ClientUnaryCall;
  (request: Req, metadata: Metadata, options: Partial<CallOptions>, callback: Callback<Res>): ClientUnaryCall;
}

/** A grpc-js client with one method per method of a generic definition. */
export type GrpcClient<M> = Client & {
  [K in keyof M]: M[K] extends GenericMethod<infer Req, infer Res>
    ? M[K] extends { responseStream: true }
      ? (request: Req, options?: Partial<CallOptions>) => ClientReadableStream<Res>
      : UnaryClientMethod<Req, Res>
    : never;
};

type ClientConstructor<M> = new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>) => GrpcClient<M>;

type RuntimeMethods = typeof api.RuntimeServiceDefinition.methods;
type ImageMethods = typeof api.ImageServiceDefinition.methods;

export const RuntimeServiceService = grpcService(api.RuntimeServiceDefinition);
export const ImageServiceService = grpcService(api.ImageServiceDefinition);
export type RuntimeServiceServer = GrpcServer<RuntimeMethods>;
export type ImageServiceServer = GrpcServer<ImageMethods>;
export type RuntimeServiceClient = GrpcClient<RuntimeMethods>;
export type ImageServiceClient = GrpcClient<ImageMethods>;
export const RuntimeServiceClient = makeGenericClientConstructor(
  RuntimeServiceService,
  api.RuntimeServiceDefinition.fullName,
) as unknown as ClientConstructor<RuntimeMethods>;
export const ImageServiceClient = makeGenericClientConstructor(
  ImageServiceService,
  api.ImageServiceDefinition.fullName,
) as unknown as ClientConstructor<ImageMethods>;
