/**
 * Fault injection for the simulated runtime: per-RPC latency distributions,
 * per-RPC error rates, truncated lists (ListPodSandbox and ListContainers
 * answering with part of what exists) and a "runtime down" switch. RPC names are the proto
 * method names (`ListContainers`, `PullImage`, …); `default` applies to every
 * RPC, and an RPC's own entry overrides it field by field. Randomness comes from a seeded PRNG so a test's
 * sequence of delays and failures is reproducible.
 *
 * Faults are applied before the RPC touches any state: an injected error has
 * no side effect.
 */
import { status } from '@grpc/grpc-js';
import { z } from 'zod';
import { CriError, CriUnavailableError } from '../common/errors.js';

export const latencySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fixed'), ms: z.number().min(0) }),
  z.object({ kind: z.literal('uniform'), minMs: z.number().min(0), maxMs: z.number().min(0) }),
  z.object({ kind: z.literal('lognormal'), medianMs: z.number().positive(), p99Ms: z.number().positive() }),
]);
export type LatencySpec = z.infer<typeof latencySchema>;

export const rpcFaultSchema = z.object({
  latency: latencySchema.optional(),
  /** Probability in [0,1] that the call fails. */
  errorRate: z.number().min(0).max(1).optional(),
  /** gRPC status code of injected errors (default UNAVAILABLE = 14). */
  errorCode: z.number().int().min(1).max(16).optional(),
  errorMessage: z.string().optional(),
  /** List RPCs (ListPodSandbox, ListContainers): probability in [0,1] that each item is left out of the answer. */
  dropFraction: z.number().min(0).max(1).optional(),
});
export type RpcFault = z.infer<typeof rpcFaultSchema>;

export const faultConfigSchema = z.object({
  default: rpcFaultSchema.optional(),
  rpcs: z.record(z.string(), rpcFaultSchema).optional(),
});
export type FaultConfig = z.infer<typeof faultConfigSchema>;

/** mulberry32: small, fast, seedable; good enough for jitter and coin flips. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const Z99 = 2.3263478740408408;

/** Draws one latency in ms from the spec. */
export function sampleLatency(spec: LatencySpec, rand: () => number): number {
  switch (spec.kind) {
    case 'fixed':
      return spec.ms;
    case 'uniform':
      return spec.minMs + (Math.max(spec.maxMs, spec.minMs) - spec.minMs) * rand();
    case 'lognormal': {
      const mu = Math.log(spec.medianMs);
      const sigma = Math.max(0, Math.log(spec.p99Ms) - mu) / Z99;
      const u1 = Math.max(rand(), Number.MIN_VALUE);
      const u2 = rand();
      const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      return Math.exp(mu + sigma * z);
    }
    default: {
      const never: never = spec;
      return never;
    }
  }
}

/** Parses the CLI form: `fixed:MS`, `uniform:MIN:MAX`, `lognormal:MEDIAN:P99`. */
export function parseLatency(text: string): LatencySpec {
  const [kind, a, b] = text.split(':');
  const n = (s: string | undefined) => {
    const v = Number(s);
    if (s === undefined || s === '' || !Number.isFinite(v))
      throw new Error(`bad latency "${text}": expected fixed:MS, uniform:MIN:MAX or lognormal:MEDIAN:P99`);
    return v;
  };
  const spec =
    kind === 'fixed'
      ? { kind, ms: n(a) }
      : kind === 'uniform'
        ? { kind, minMs: n(a), maxMs: n(b) }
        : kind === 'lognormal'
          ? { kind, medianMs: n(a), p99Ms: n(b) }
          : undefined;
  if (!spec) throw new Error(`bad latency "${text}": expected fixed:MS, uniform:MIN:MAX or lognormal:MEDIAN:P99`);
  return latencySchema.parse(spec);
}

export interface RuntimeDown {
  reason: string;
  message: string;
}

/** What the injector decided for one call. */
export interface FaultDecision {
  delayMs: number;
  error?: CriError;
}

const NONE: FaultDecision = { delayMs: 0 };

export class FaultInjector {
  private config: FaultConfig = {};
  private rand: () => number;
  private down: RuntimeDown | undefined;
  /** Injected failures so far, by RPC. */
  readonly injected = new Map<string, number>();
  /** List items left out so far, by RPC. */
  readonly dropped = new Map<string, number>();

  constructor(seed = 1, config?: FaultConfig) {
    this.rand = seededRandom(seed);
    if (config) this.set(config);
  }

  /** Replaces the whole configuration (validated). */
  set(config: FaultConfig): void {
    this.config = faultConfigSchema.parse(config);
  }

  get(): FaultConfig {
    return this.config;
  }

  reseed(seed: number): void {
    this.rand = seededRandom(seed);
  }

  /** Sets (or with undefined, clears) the latency of one RPC or of `default`. */
  setLatency(rpc: string, latency: LatencySpec | undefined): void {
    this.patch(rpc, { latency: latency === undefined ? undefined : latencySchema.parse(latency) });
  }

  setErrorRate(rpc: string, errorRate: number, errorCode?: number, errorMessage?: string): void {
    this.patch(rpc, rpcFaultSchema.parse({ errorRate, errorCode, errorMessage }));
  }

  setRuntimeDown(down: RuntimeDown | undefined): void {
    this.down = down;
  }

  runtimeDown(): RuntimeDown | undefined {
    return this.down;
  }

  /**
   * Decides delay and failure for one call. `Status` is never failed by
   * runtime-down (it reports it instead); every other RPC fails UNAVAILABLE.
   */
  decide(rpc: string): FaultDecision {
    if (this.down && rpc !== 'Status') {
      return {
        delayMs: 0,
        error: new CriUnavailableError(`runtime is down: ${this.down.reason}: ${this.down.message}`, rpc, status.UNAVAILABLE),
      };
    }
    const f = this.effective(rpc);
    if (!f) return NONE;
    const delayMs = f.latency ? sampleLatency(f.latency, this.rand) : 0;
    if (f.errorRate && this.rand() < f.errorRate) {
      this.injected.set(rpc, (this.injected.get(rpc) ?? 0) + 1);
      const code: number = f.errorCode ?? status.UNAVAILABLE;
      const message = f.errorMessage ?? `injected fault for ${rpc}`;
      const error = code === Number(status.UNAVAILABLE) ? new CriUnavailableError(message, rpc, code) : new CriError(message, rpc, code);
      return { delayMs, error };
    }
    return { delayMs };
  }

  /**
   * A list RPC's items with the configured fraction left out, each by a coin flip; undefined when the RPC
   * drops nothing (the caller answers with its usual, possibly cached, list).
   */
  truncate<T>(rpc: string, items: () => T[]): T[] | undefined {
    const fraction = this.effective(rpc)?.dropFraction;
    if (!fraction) return undefined;
    const all = items();
    const kept = all.filter(() => this.rand() >= fraction);
    if (kept.length < all.length) this.dropped.set(rpc, (this.dropped.get(rpc) ?? 0) + all.length - kept.length);
    return kept;
  }

  private effective(rpc: string): RpcFault | undefined {
    const own = this.config.rpcs?.[rpc];
    const base = this.config.default;
    return own && base ? { ...base, ...own } : (own ?? base);
  }

  private patch(rpc: string, change: Partial<RpcFault>): void {
    const next: FaultConfig = { ...this.config, rpcs: { ...this.config.rpcs } };
    if (rpc === 'default') {
      next.default = stripUndefined({ ...next.default, ...change });
    } else {
      next.rpcs![rpc] = stripUndefined({ ...next.rpcs![rpc], ...change });
    }
    this.config = next;
  }
}

function stripUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}
