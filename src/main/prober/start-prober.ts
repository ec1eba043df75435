/**
 * Builds the ProberManager for the agent: the prober host on its own worker
 * thread, or inline on the main thread in --worker-threads=0 mode.
 */
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';
import type { EventRecorder } from '../events/event-recorder.js';
import type { ProbeResult } from '../sync-loop/sync-loop-queue.js';
import { InlineProber, ThreadProber } from './prober-channel.js';
import { ProberManager } from './prober-manager.js';

export interface StartProberOptions {
  /** false: run the prober host on the main thread (inline mode). */
  thread: boolean;
  runtimeEndpoint: string;
  runtimeRequestTimeoutMs: number;
  cache: PodStatusCache;
  nodeIP: string;
  clock: Clock;
  queue: { pushProbe(result: ProbeResult): void };
  recorder: EventRecorder;
  podOf(uid: string): Pod | undefined;
  logger: Logger;
}

export function startProber(options: StartProberOptions): ProberManager {
  return new ProberManager({
    queue: options.queue,
    recorder: options.recorder,
    podOf: (uid) => options.podOf(uid),
    logger: options.logger,
    channel: (onBatch) =>
      options.thread
        ? new ThreadProber(
            {
              runtimeEndpoint: options.runtimeEndpoint,
              runtimeRequestTimeoutMs: options.runtimeRequestTimeoutMs,
              podCache: options.cache.buffer,
              nodeIP: options.nodeIP,
            },
            onBatch,
            (err) => options.logger.error({ err: err?.message }, 'The prober thread stopped; probes do not run until kubelet-ts restarts'),
          )
        : new InlineProber(
            {
              runtimeEndpoint: options.runtimeEndpoint,
              runtimeRequestTimeoutMs: options.runtimeRequestTimeoutMs,
              cache: options.cache,
              nodeIP: options.nodeIP,
              clock: options.clock,
            },
            onBatch,
          ),
  });
}
