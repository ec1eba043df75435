/**
 * The one place where sim handlers meet grpc-js: fault injection (latency,
 * injected errors, runtime down) before the handler runs, and translation of
 * thrown errors to gRPC status. Handlers return a value or a promise, or throw
 * a CriError carrying containerd's code and message.
 */
import { status, type handleUnaryCall, type sendUnaryData, type ServerUnaryCall, type ServiceError } from '@grpc/grpc-js';
import { CriError } from '../common/errors.js';
import { errorMessage } from '../common/error-message.js';
import type { FaultInjector } from './faults.js';

export interface RpcContext {
  faults: FaultInjector;
  /** Tracked timer on the injected clock (cancelled when the sim closes). */
  timer(ms: number, fn: () => void): () => void;
  /** Counts calls by RPC name (for SimControl.stats()). */
  calls: Map<string, number>;
}

export function toServiceError(err: unknown): Partial<ServiceError> {
  if (err instanceof CriError) return { code: err.grpcCode, details: err.message };
  const message = errorMessage(err);
  return { code: status.UNKNOWN, details: message };
}

export type Handler<Req, Res> = (req: Req, call: ServerUnaryCall<Req, Res>) => NoInfer<Res> | Promise<NoInfer<Res>>;

export function unary<Req, Res>(ctx: RpcContext, rpc: string, fn: Handler<Req, Res>): handleUnaryCall<Req, Res> {
  return (call, callback: sendUnaryData<Res>) => {
    ctx.calls.set(rpc, (ctx.calls.get(rpc) ?? 0) + 1);
    const d = ctx.faults.decide(rpc);
    const run = () => {
      if (d.error) return callback(toServiceError(d.error));
      let out: Res | Promise<Res>;
      try {
        out = fn(call.request, call);
      } catch (err) {
        return callback(toServiceError(err));
      }
      if (out instanceof Promise)
        out.then(
          (v) => callback(null, v),
          (err) => callback(toServiceError(err)),
        );
      else callback(null, out);
    };
    if (d.delayMs > 0) ctx.timer(d.delayMs, run);
    else run();
  };
}

/** An empty `info` map (verbose info is only returned when asked for). */
export function noInfo(): Record<string, string> {
  return {};
}
