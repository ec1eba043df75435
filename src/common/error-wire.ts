/**
 * Errors cross the thread boundary as SerializedError (structured clone drops
 * classes). This module is the only place that converts in either direction.
 */
import {
  CriDeadlineError,
  CriError,
  CriInvalidArgumentError,
  CriNotFoundError,
  CriUnavailableError,
  KubeletTsError,
  ERROR_CODES,
} from './errors.js';

export interface SerializedError {
  name: string;
  code: string;
  message: string;
  operation?: string;
  grpcCode?: number;
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof CriError) {
    return { name: err.name, code: err.code, message: err.message, operation: err.operation, grpcCode: err.grpcCode };
  }
  if (err instanceof KubeletTsError) return { name: err.name, code: err.code, message: err.message };
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, code: ERROR_CODES.KubeletTsError, message: e.message };
}

const CRI_CLASSES: Record<string, typeof CriError> = {
  [ERROR_CODES.CriError]: CriError,
  [ERROR_CODES.CriNotFoundError]: CriNotFoundError,
  [ERROR_CODES.CriUnavailableError]: CriUnavailableError,
  [ERROR_CODES.CriDeadlineError]: CriDeadlineError,
  [ERROR_CODES.CriInvalidArgumentError]: CriInvalidArgumentError,
};

export function deserializeError(e: SerializedError): KubeletTsError {
  const Cri = CRI_CLASSES[e.code];
  if (Cri) return new Cri(e.message, e.operation ?? '', e.grpcCode ?? 2);
  return new KubeletTsError(`${e.name}: ${e.message}`);
}
