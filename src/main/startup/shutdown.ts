/**
 * The agent's ordered shutdown: each start-up phase registers the step that
 * undoes what it started, and run() takes the steps in reverse order of
 * registration (the last part started stops first), each awaited before the
 * next. A step that fails does not keep the later ones from running; run()
 * then rejects with the first failure. The steps run once.
 */

/** name: what the step stops (for a reader of the list; shown in a debugger). */
type Step = { name: string; run: () => Promise<void> | void };

export class Shutdown {
  private readonly steps: Step[] = [];
  private done: Promise<void> | undefined;

  /** Registers `run` to be taken when the agent stops, before every step registered earlier. */
  add(name: string, run: () => Promise<void> | void): void {
    this.steps.push({ name, run });
  }

  /** Takes every step, newest first; resolves when the last has ended. */
  run(): Promise<void> {
    this.done ??= (async () => {
      const failures: unknown[] = [];
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (err) {
          failures.push(err);
        }
      }
      if (failures.length > 0) throw failures[0];
    })();
    return this.done;
  }
}
