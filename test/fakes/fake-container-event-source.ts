import type { ContainerEventSource } from '../../src/main/pleg/container-event-source.js';
import type { ContainerEventBatch, WatchOutcome } from '../../src/container-events/event-watcher.js';

/**
 * A ContainerEventSource driven by the test: each watch() waits until the test
 * ends it with `end(outcome)`; `push(batch)` delivers to the open watch.
 */
export class FakeContainerEventSource implements ContainerEventSource {
  watches = 0;
  closed = false;
  private deliver: ((batch: ContainerEventBatch) => void) | undefined;
  private finish: ((o: WatchOutcome) => void) | undefined;
  /** Outcomes for the next watches, returned at once (e.g. failures); then watches stay open. */
  script: WatchOutcome[] = [];

  watch(deliver: (batch: ContainerEventBatch) => void): Promise<WatchOutcome> {
    this.watches++;
    const scripted = this.script.shift();
    if (scripted) return Promise.resolve(scripted);
    this.deliver = deliver;
    return new Promise((resolve) => (this.finish = resolve));
  }

  get open(): boolean {
    return this.finish !== undefined;
  }

  push(batch: Partial<ContainerEventBatch>): void {
    if (!this.deliver) throw new Error('no open watch');
    this.deliver({ unslotted: [], sandboxDeleted: [], events: [], lagMs: [], ...batch });
  }

  end(outcome: WatchOutcome): void {
    const f = this.finish;
    this.finish = undefined;
    this.deliver = undefined;
    f?.(outcome);
  }

  cancel(): void {
    this.end({ cancelled: true, received: 0 });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancel();
  }
}
