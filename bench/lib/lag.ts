/**
 * Main-thread event-loop lag, measured only while `start()`…`stop()` is
 * active: a 1 ms interval timer records how late each tick fires. Unlike
 * re-enabling perf_hooks.monitorEventLoopDelay between measured windows, a
 * paused window adds no sample spanning the pause.
 */
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';

export class LagProbe {
  readonly histogram: RecordableHistogram = createHistogram();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  start(): void {
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      const lateMs = Math.max(0, now - this.last - 1);
      this.histogram.record(Math.max(1, Math.round(lateMs * 1e6)));
      this.last = now;
    }, 1);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** p-th percentile of the lag, ms. */
  percentileMs(p: number): number {
    return this.histogram.count === 0 ? 0 : this.histogram.percentile(p) / 1e6;
  }
}
