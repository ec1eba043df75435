/**
 * The syncLoop's one input queue (replaces Go's select over channels).
 * Producers push typed events; one consumer drains them with `for await`.
 *
 * - config updates: unbounded, but already coalesced per source by the merge;
 * - PLEG events: bounded (upstream's 1000-event channel); `offerPleg` never
 *   blocks and returns false when full, so the PLEG counts the drop;
 * - ticks (sync, housekeeping): at most one pending of each kind;
 * - probe results: coalesced per (pod, container, probe), latest wins.
 * When several kinds are pending, one is chosen uniformly at random, as Go's
 * select chooses among ready channels, so a sustained stream of one kind
 * (PLEG events during a mass restart) never starves the sync tick or
 * housekeeping. Within a kind, order is kept.
 */
import type { PodUpdate } from '../podconfig/types.js';
import type { PlegEvent } from '../../runtime/pleg-event.js';

export interface ProbeResult {
  podUid: string;
  container: string;
  probe: 'liveness' | 'readiness' | 'startup';
  success: boolean;
}

export type SyncLoopEvent =
  | { kind: 'config'; update: PodUpdate }
  | { kind: 'pleg'; event: PlegEvent }
  | { kind: 'probe'; result: ProbeResult }
  | { kind: 'sync' }
  | { kind: 'housekeeping' };

export class SyncLoopQueue {
  private readonly config: PodUpdate[] = [];
  private readonly pleg: PlegEvent[] = [];
  private readonly probes = new Map<string, ProbeResult>();
  private syncPending = false;
  private housekeepingPending = false;
  private wake: (() => void) | undefined;

  /** `random` picks among ready kinds (default Math.random); tests pass a deterministic one. */
  constructor(
    readonly plegCapacity = 1000,
    private readonly random: () => number = Math.random,
  ) {}

  pushConfig(update: PodUpdate): void {
    this.config.push(update);
    this.notify();
  }

  /** Never blocks; false when the PLEG channel is full (the caller counts the discard). */
  offerPleg(event: PlegEvent): boolean {
    if (this.pleg.length >= this.plegCapacity) return false;
    this.pleg.push(event);
    this.notify();
    return true;
  }

  pushProbe(result: ProbeResult): void {
    this.probes.set(`${result.podUid}/${result.container}/${result.probe}`, result);
    this.notify();
  }

  tick(kind: 'sync' | 'housekeeping'): void {
    if (kind === 'sync') this.syncPending = true;
    else this.housekeepingPending = true;
    this.notify();
  }

  get plegLength(): number {
    return this.pleg.length;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private next(): SyncLoopEvent | undefined {
    const ready: (() => SyncLoopEvent)[] = [];
    if (this.config.length) ready.push(() => ({ kind: 'config', update: this.config.shift()! }));
    if (this.pleg.length) ready.push(() => ({ kind: 'pleg', event: this.pleg.shift()! }));
    if (this.probes.size) {
      ready.push(() => {
        const [key, result] = this.probes.entries().next().value as [string, ProbeResult];
        this.probes.delete(key);
        return { kind: 'probe', result };
      });
    }
    if (this.syncPending) {
      ready.push(() => {
        this.syncPending = false;
        return { kind: 'sync' };
      });
    }
    if (this.housekeepingPending) {
      ready.push(() => {
        this.housekeepingPending = false;
        return { kind: 'housekeeping' };
      });
    }
    if (ready.length === 0) return undefined;
    const pick = ready.length === 1 ? 0 : Math.min(ready.length - 1, Math.floor(this.random() * ready.length));
    return ready[pick]();
  }

  /** The single consumer's next event, waiting for one; undefined once the signal aborts. */
  async take(signal: AbortSignal): Promise<SyncLoopEvent | undefined> {
    while (!signal.aborted) {
      const e = this.next();
      if (e) return e;
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        this.wake = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    return undefined;
  }
}
