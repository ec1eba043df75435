import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { mapGrpcError } from '../../src/cri/client.js';
import * as errors from '../../src/common/errors.js';

describe('mapGrpcError', () => {
  it.each([
    [grpc.status.NOT_FOUND, errors.CriNotFoundError, 'KTS_ERR_CRI_NOT_FOUND'],
    [grpc.status.UNAVAILABLE, errors.CriUnavailableError, 'KTS_ERR_CRI_UNAVAILABLE'],
    [grpc.status.DEADLINE_EXCEEDED, errors.CriDeadlineError, 'KTS_ERR_CRI_DEADLINE'],
    [grpc.status.INVALID_ARGUMENT, errors.CriInvalidArgumentError, 'KTS_ERR_CRI_INVALID_ARGUMENT'],
    [grpc.status.UNKNOWN, errors.CriError, 'KTS_ERR_CRI'],
  ])('maps code %i keeping the gRPC code and operation', (code, cls, errCode) => {
    const e = mapGrpcError('list_containers', { code, details: 'boom' });
    expect(e).toBeInstanceOf(cls);
    expect(e.code).toBe(errCode);
    expect(e.grpcCode).toBe(code);
    expect(e.operation).toBe('list_containers');
    expect(e.message).toBe(`list_containers: rpc error: code = ${grpc.status[code]} desc = boom`);
  });
});

describe('error codes', () => {
  it('every exported error class has its own listed code', () => {
    const classes = Object.entries(errors).filter(([, v]) => typeof v === 'function') as [
      string,
      new (message: string, operation: string, code: number) => errors.KubeletTsError,
    ][];
    const seen = new Set<string>();
    for (const [name, cls] of classes) {
      const instance = new cls('m', 'op', 0);
      expect(errors.ERROR_CODES[name as keyof typeof errors.ERROR_CODES], name).toBe(instance.code);
      expect(seen.has(instance.code), `duplicate ${instance.code}`).toBe(false);
      seen.add(instance.code);
      expect(instance.name).toBe(name);
    }
    expect(seen.size).toBe(Object.keys(errors.ERROR_CODES).length);
  });
});
