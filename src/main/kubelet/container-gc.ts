/**
 * Runs container garbage collection every minute (upstream
 * StartGarbageCollection: ContainerGCPeriod, first run at start). The lists
 * and removals are worker tasks; the choice of what to remove is made here,
 * on the main thread, against the pod workers right after each list (upstream
 * asks its podStateProvider the same way). Runs never overlap; a failed run
 * is logged and the next one retries.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import {
  CONTAINER_GC_PERIOD_MS,
  DEFAULT_GC_POLICY,
  selectContainers,
  selectLogDirectories,
  selectSandboxes,
  type GcInput,
  type GcPolicy,
} from './container-gc-select.js';
import type { GcResult } from '../../workers/protocol/gc-wire.js';
import { runPeriodically } from '../../common/periodic.js';
import { errorMessage } from '../../common/error-message.js';

export interface ContainerGcOptions {
  runner: TaskRunner;
  clock: Clock;
  logger: Logger;
  podLogsDir: string;
  /** Directory of the container log links ('' = none). */
  containerLogsDir?: string;
  /** Upstream ShouldPodContentBeRemoved (the pod workers). */
  shouldPodContentBeRemoved(uid: string): boolean;
  /** All pod sources have delivered once (upstream sourcesReady.AllReady). */
  allSourcesReady(): boolean;
  /** The pod is terminated (its dead containers may go even if it is not deleted: upstream evictNonDeletedPods). */
  shouldPodRuntimeBeRemoved?(uid: string): boolean;
  policy?: GcPolicy;
  periodMs?: number;
}

export class ContainerGc {
  private running: Promise<void> | undefined;

  constructor(private readonly options: Readonly<ContainerGcOptions>) {}

  start(signal: AbortSignal): void {
    runPeriodically(() => this.runOnce(), {
      periodMs: this.options.periodMs ?? CONTAINER_GC_PERIOD_MS,
      firstDelayMs: 0,
      signal,
      clock: this.options.clock,
      // runOnce logs its own failures and never rejects.
      onError: () => undefined,
    }).catch(() => undefined);
  }

  /** One collection; resolves when done (a run already in progress is joined, not repeated). */
  runOnce(): Promise<void> {
    this.running ??= this.collect()
      .catch((err: unknown) => this.options.logger.error({ err: errorMessage(err) }, 'Container garbage collection failed'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * Upstream DeleteAllUnusedContainers, for the eviction manager: one collection that also takes every dead
   * container of terminated pods that are not deleted. Waits for a collection in progress; rejects on failure.
   */
  async deleteAllUnusedContainers(): Promise<void> {
    await this.running;
    const run = this.collect(true);
    this.running = run.catch(() => undefined).finally(() => (this.running = undefined));
    return run;
  }

  /** Resolves when no collection is in flight (for shutdown). */
  async idle(): Promise<void> {
    await this.running;
  }

  private input(evictNonDeletedPods: boolean): GcInput {
    const terminated = evictNonDeletedPods ? (uid: string) => this.options.shouldPodRuntimeBeRemoved?.(uid) ?? false : undefined;
    return {
      policy: this.options.policy ?? DEFAULT_GC_POLICY,
      allSourcesReady: this.options.allSourcesReady(),
      removable: (uid) => this.options.shouldPodContentBeRemoved(uid) || (terminated?.(uid) ?? false),
      now: this.options.clock.now(),
    };
  }

  private async collect(evictNonDeletedPods = false): Promise<void> {
    const { runner, logger } = this.options;
    const first = await runner.run({ type: 'gcList' });
    const containers = selectContainers(first.containers, this.input(evictNonDeletedPods));
    const removed: GcResult[] = [];
    const containerLogsDir = this.options.containerLogsDir || undefined;
    if (containers.length) removed.push(await runner.run({ type: 'gcRemove', removal: { containers, containerLogsDir } }));
    const second = await runner.run({ type: 'gcList' });
    const input = this.input(evictNonDeletedPods);
    const sandboxes = selectSandboxes(second.sandboxes, second.containers, input);
    const logDirectories = selectLogDirectories(this.options.podLogsDir, input);
    if (sandboxes.length || logDirectories.length || containerLogsDir)
      removed.push(await runner.run({ type: 'gcRemove', removal: { sandboxes, logDirectories, containerLogsDir } }));
    const sum = (k: 'containers' | 'sandboxes' | 'logDirectories') => removed.reduce((n, r) => n + r[k], 0);
    const errors = removed.flatMap((r) => r.errors);
    if (errors.length) logger.warn({ errors }, 'Container garbage collection left some items; the next run retries');
    if (sum('containers') || sum('sandboxes') || sum('logDirectories')) {
      logger.info(
        { containers: sum('containers'), sandboxes: sum('sandboxes'), logDirectories: sum('logDirectories') },
        'Container garbage collection removed dead containers',
      );
    }
  }
}
