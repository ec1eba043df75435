/**
 * Container log rotation (upstream containerLogManager.Start): every
 * containerLogMonitorInterval the `rotateLogs` pool task rotates the CRI log
 * files of running containers that reached containerLogMaxSize, keeping
 * containerLogMaxFiles files per container, containerLogMaxWorkers at a time.
 * Runs never overlap; a failed round is logged and the next one retries.
 * Each round logs at debug level how many log paths it had to read through
 * CRI ContainerStatus (those it could not derive from the labels).
 */
import type { Logger } from 'pino';
import { value } from '../../api/quantity.js';
import type { Clock } from '../../common/clock.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import { errorMessage } from '../../common/error-message.js';
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

export class ContainerLogManager {
  private running: Promise<void> | undefined;

  constructor(private readonly o: ContainerLogManagerOptions) {}

  start(signal: AbortSignal): void {
    // runOnce logs its failures and never rejects.
    runPeriodically(() => this.runOnce(), { periodMs: this.o.periodMs, signal, clock: this.o.clock, onError: () => undefined }).catch(
      () => undefined,
    );
  }

  runOnce(): Promise<void> {
    this.running ??= this.rotate()
      .catch((err: unknown) => this.o.logger.error({ err: errorMessage(err) }, 'Failed to rotate container logs'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async rotate(): Promise<void> {
    const r = await this.o.runner.run({
      type: 'rotateLogs',
      input: {
        maxSizeBytes: Number(value(this.o.maxSize)),
        maxFiles: this.o.maxFiles,
        workers: this.o.maxWorkers,
        nowMs: this.o.clock.now(),
        podLogsDir: this.o.podLogsDir,
      },
    });
    this.o.logger.debug({ statusReads: r.statusReads }, 'Checked the container logs for rotation');
    for (const path of r.rotated) this.o.logger.info({ path }, 'Rotated the container log');
    for (const err of r.errors) this.o.logger.error({ err }, 'Failed to rotate the log of a running container');
  }
}
