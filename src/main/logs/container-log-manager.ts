/**
 * Container log rotation (upstream containerLogManager.Start): every
 * containerLogMonitorInterval the `rotateLogs` pool task rotates the CRI log
 * files of running containers that reached containerLogMaxSize, keeping
 * containerLogMaxFiles files per container, containerLogMaxWorkers at a time.
 * Runs never overlap; a failed round is logged and the next one retries.
 * Each round logs at debug level how many log paths it had to read through
 * CRI ContainerStatus (those it could not derive from the cached status).
 *
 * Upstream logs each container's failure every round; with the log directory
 * read-only or full that is every running container every 10 s for one
 * cause. Here a round's failures make one line (how many, the first few),
 * at most every 30 s while they go on, and one line when a round succeeds
 * again; each container's error is at V(4).
 */
import type { Logger } from 'pino';
import { value } from '../../api/quantity.js';
import type { Clock } from '../../common/clock.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import { errorMessage } from '../../common/error-message.js';
import { FailureLog } from '../../common/failure-log.js';
import { runPeriodically } from '../../common/periodic.js';

export interface ContainerLogManagerOptions {
  runner: Pick<TaskRunner, 'run'>;
  clock: Clock;
  logger: Logger;
  /** containerLogMaxSize, a quantity ("10Mi"). */
  maxSize: string;
  maxFiles: number;
  maxWorkers: number;
  periodMs: number;
  /** podLogsDir: the root under which the task derives log paths without ContainerStatus. */
  podLogsDir: string;
}

/** Container errors quoted in a round's one failure line. */
const ERRORS_SHOWN = 3;

export class ContainerLogManager {
  private running: Promise<void> | undefined;
  private readonly failures: FailureLog;

  constructor(private readonly options: Readonly<ContainerLogManagerOptions>) {
    this.failures = new FailureLog(options.logger, options.clock, 'Rotating the logs of running containers');
  }

  start(signal: AbortSignal): void {
    // runOnce logs its failures and never rejects.
    runPeriodically(() => this.runOnce(), {
      periodMs: this.options.periodMs,
      signal,
      clock: this.options.clock,
      onError: () => undefined,
    }).catch(() => undefined);
  }

  runOnce(): Promise<void> {
    this.running ??= this.rotate()
      .catch((err: unknown) => this.options.logger.error({ err: errorMessage(err) }, 'Failed to rotate container logs'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async rotate(): Promise<void> {
    const r = await this.options.runner.run({
      type: 'rotateLogs',
      input: {
        maxSizeBytes: Number(value(this.options.maxSize)),
        maxFiles: this.options.maxFiles,
        workers: this.options.maxWorkers,
        nowMs: this.options.clock.now(),
        podLogsDir: this.options.podLogsDir,
      },
    });
    this.options.logger.debug({ statusReads: r.statusReads }, 'Checked the container logs for rotation');
    for (const path of r.rotated) this.options.logger.info({ path }, 'Rotated the container log');
    for (const err of r.errors) this.options.logger.debug({ err }, 'Failed to rotate the log of a running container');
    if (r.errors.length === 0) return this.failures.success();
    const shown = r.errors.slice(0, ERRORS_SHOWN).join('; ');
    const more = r.errors.length > ERRORS_SHOWN ? ` (and ${r.errors.length - ERRORS_SHOWN} more)` : '';
    this.failures.failure(`${r.errors.length} container(s): ${shown}${more}`, { containers: r.errors.length });
  }
}
