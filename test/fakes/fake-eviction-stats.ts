import type { Pod } from '../../src/api/pod.js';
import type { EvictionStatsProvider, NodeSummary, PodsSummary, PodUsage } from '../../src/main/eviction/eviction-stats.js';
import type { Observations, SignalObservation, Signal } from '../../src/main/eviction/thresholds.js';

/**
 * Settable eviction figures: what the reads return is whatever the test set
 * last. allocatableMemory.available comes with the pods' read, as on a real
 * node; every other signal with the node's. `calls` counts node reads,
 * `podCalls` pod reads.
 */
export class FakeEvictionStats implements EvictionStatsProvider {
  observations: Observations = {};
  usage = new Map<string, PodUsage>();
  dedicatedImageFs = false;
  calls = 0;
  podCalls = 0;
  /** Called before each node read (e.g. to simulate reclaimed space after a GC). */
  beforeGet?: (call: number) => void;
  failWith?: Error;

  set(signal: Signal, o: SignalObservation): this {
    this.observations[signal] = o;
    return this;
  }

  setPod(u: PodUsage): this {
    this.usage.set(u.uid, u);
    return this;
  }

  node(): Promise<NodeSummary> {
    this.calls++;
    this.beforeGet?.(this.calls);
    if (this.failWith) return Promise.reject(this.failWith);
    const { 'allocatableMemory.available': _fromPods, ...observations } = this.observations;
    return Promise.resolve({ observations, dedicatedImageFs: this.dedicatedImageFs });
  }

  pods(pods: readonly Pod[]): Promise<PodsSummary> {
    this.podCalls++;
    if (this.failWith) return Promise.reject(this.failWith);
    const wanted = new Set(pods.map((p) => p.metadata.uid));
    const alloc = this.observations['allocatableMemory.available'];
    return Promise.resolve({
      pods: [...this.usage.values()].filter((p) => wanted.has(p.uid)),
      observations: alloc ? { 'allocatableMemory.available': alloc } : {},
    });
  }
}
