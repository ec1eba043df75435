/**
 * PodConfig: the mux that merges every pod source into one ordered stream of
 * PodUpdate deltas for the syncLoop (upstream config.PodConfig + util/config.Mux).
 *
 * Each source gets its own input (`channel(name)`, or `addSource(source)`,
 * which starts the source on it). Because merge is synchronous and Node runs
 * one callback at a time, every input call is merged to completion before the
 * next: that is the single ordered consumer, with no per-source buffering.
 * Deltas go to `updates`, an unbounded queue of already-coalesced deltas (see
 * update-queue.ts for why unbounded is acceptable).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import type { Pod } from '../../api/pod.js';
import { PodStorage, type PodEventRecorder } from './pod-storage.js';
import { UpdateQueue } from './update-queue.js';
import { ALL_SOURCES, type PodSource, type PodUpdate, type SourceChannel, type SourceName } from './types.js';

export interface PodConfigOptions {
  clock: Clock;
  logger: Logger;
  recorder?: PodEventRecorder;
  /** Stops every source started through addSource and closes `updates`. */
  signal?: AbortSignal;
}

export class PodConfig {
  /** The delta stream; consumed by exactly one syncLoop. */
  readonly updates = new UpdateQueue<PodUpdate>();
  private readonly storage: PodStorage;
  private readonly channels = new Map<string, SourceChannel>();
  private readonly logger: Logger;
  private readonly controller = new AbortController();

  constructor(opts: PodConfigOptions) {
    this.logger = opts.logger;
    this.storage = new PodStorage({ clock: opts.clock, logger: opts.logger, recorder: opts.recorder });
    if (opts.signal) {
      if (opts.signal.aborted) this.stop();
      else opts.signal.addEventListener('abort', () => this.stop(), { once: true });
    }
  }

  /**
   * Registers `source` (idempotent) and returns its input. The source counts
   * towards seenAllSources from now on. Calls after stop() are ignored.
   */
  channel(source: SourceName): SourceChannel {
    if (source === '' || source === ALL_SOURCES) throw new Error(`PodConfig.channel: invalid source name ${JSON.stringify(source)}`);
    let ch = this.channels.get(source);
    if (!ch) {
      ch = (update) => {
        if (this.updates.isClosed) return;
        for (const delta of this.storage.merge(source, update)) this.updates.push(delta);
      };
      this.channels.set(source, ch);
    }
    return ch;
  }

  /** Registers the source's channel and starts it; it stops when this PodConfig stops. */
  addSource(source: PodSource): void {
    const ch = this.channel(source.name);
    this.logger.info({ source: source.name }, 'Adding pod source');
    source.start(this.controller.signal, ch);
  }

  /** Names of every registered source. */
  sources(): string[] {
    return [...this.channels.keys()];
  }

  /**
   * Upstream SeenAllSources: true when `seenSources` (the sources the caller
   * has itself observed, e.g. the kubelet's sourcesReady) contains every
   * registered source and each registered source has delivered a SET.
   * Without an argument only the second condition is checked.
   */
  seenAllSources(seenSources?: Iterable<string>): boolean {
    const registered = this.sources();
    if (seenSources) {
      const seen = new Set(seenSources);
      if (!registered.every((s) => seen.has(s))) return false;
    }
    return this.storage.seenSources(...registered);
  }

  /** Upstream Sync: queues a SET of the full merged state with source '*'. */
  sync(): void {
    this.updates.push({ op: 'SET', pods: this.storage.mergedState(), source: ALL_SOURCES });
  }

  /** Deep copies of every pod currently known, all sources. */
  mergedState(): Pod[] {
    return this.storage.mergedState();
  }

  /** Stops sources started with addSource and closes `updates` (queued deltas still drain). */
  stop(): void {
    this.controller.abort();
    this.updates.close();
  }
}
