/**
 * The PLEG contract the agent uses (upstream pleg.PodLifecycleEventGenerator,
 * plus the cache-slot hooks this design needs). Implementations: GenericPleg
 * (relist) and EventedPleg (CRI container events, with the generic relist as
 * its safety net and fallback).
 */
export interface PlegHealth {
  ok: boolean;
  message: string;
}

export interface PodLifecycleEventGenerator {
  /** Starts producing events into the sink until the signal aborts. */
  start(signal: AbortSignal): void;
  /** Resolves when everything start() began has stopped. */
  stopped(): Promise<void>;
  /** upstream Healthy(). */
  healthy(): PlegHealth;
  /** True while the pod's last inspection failed: its cache entry must not be trusted. */
  inspectionFailed(uid: string): boolean;
  /** The pod left every source: free its cache slot once it holds no runtime state. */
  releaseSlotWhenUnused(uid: string): void;
}
