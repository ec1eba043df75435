import type { Pod } from '../../src/api/pod.js';
import type { EvictionStatsProvider, EvictionSummary, PodUsage } from '../../src/main/eviction/eviction-stats.js';
import type { Observations, SignalObservation, Signal } from '../../src/main/eviction/thresholds.js';

/** Settable eviction figures: what `get` returns is whatever the test set last; `calls` counts reads. */
export class FakeEvictionStats implements EvictionStatsProvider {
  observations: Observations = {};
  pods = new Map<string, PodUsage>();
  dedicatedImageFs = false;
  calls = 0;
  /** Called before each read (e.g. to simulate reclaimed space after a GC). */
  beforeGet?: (call: number) => void;
  failWith?: Error;

  set(signal: Signal, o: SignalObservation): this {
    this.observations[signal] = o;
    return this;
  }

  setPod(u: PodUsage): this {
    this.pods.set(u.uid, u);
    return this;
  }

  get(pods: readonly Pod[]): Promise<EvictionSummary> {
    this.calls++;
    this.beforeGet?.(this.calls);
    if (this.failWith) return Promise.reject(this.failWith);
    const wanted = new Set(pods.map((p) => p.metadata.uid));
    return Promise.resolve({
      observations: { ...this.observations },
      pods: [...this.pods.values()].filter((p) => wanted.has(p.uid)),
      dedicatedImageFs: this.dedicatedImageFs,
    });
  }
}
