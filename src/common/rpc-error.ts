/**
 * gRPC status errors as upstream Go code prints them
 * (`rpc error: code = NotFound desc = ...`), for messages that quote a
 * plugin's answer the way the upstream kubelet's events do.
 */
import type * as grpc from '@grpc/grpc-js';
import { errorMessage } from './error-message.js';

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
