/**
 * gRPC status codes, and gRPC status errors as upstream Go code prints them
 * (`rpc error: code = NotFound desc = ...`), for messages that quote a
 * plugin's answer the way the upstream kubelet's events do.
 *
 * The codes are defined here, not taken from grpc-js's `status`: importing
 * any value of grpc-js evaluates all of it (~0.9 MB with protobufjs) on every
 * thread that does, while the agent's unary CRI calls never use grpc-js.
 */
import type * as grpc from '@grpc/grpc-js';
import { errorMessage } from './error-message.js';

/** The gRPC spec's status codes, by grpc-js's names for them. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatus = (typeof GrpcStatus)[keyof typeof GrpcStatus];

const STATUS_NAMES: readonly string[] = Object.keys(GrpcStatus);

/** grpc-js's name of a status code (`NOT_FOUND`), undefined for a code outside the spec. */
export function grpcStatusName(code: number): string | undefined {
  return STATUS_NAMES[code];
}

/** grpc-go's codes.Code String() names. */
export const GO_CODE_NAMES: Record<number, string> = {
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
};

/** upstream's text of a gRPC status error: `rpc error: code = NotFound desc = ...`. */
export function rpcErrorMessage(err: unknown): string {
  const e = err as Partial<grpc.ServiceError>;
  if (typeof e?.code === 'number') return `rpc error: code = ${GO_CODE_NAMES[e.code] ?? String(e.code)} desc = ${e.details ?? ''}`;
  return errorMessage(err);
}
