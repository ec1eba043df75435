/**
 * Termination order of a pod with sidecars (upstream
 * kuberuntime_termination_order.go terminationOrdering): every sidecar waits
 * until all regular containers have stopped, and a sidecar waits for the
 * sidecars declared after it, so sidecars stop in reverse spec order, last of
 * all. Containers that are not running are treated as already stopped.
 *
 * Contract: one instance per killPod call; waitForTurn is bounded by the
 * remaining grace period and returns the whole seconds it waited (the caller
 * subtracts them from the grace period, as upstream truncates).
 */
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { isRestartableInitContainer } from '../../pod/init-containers.js';

interface Gate {
  done: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

export class TerminationOrdering {
  private readonly terminatedGates = new Map<string, Gate>();
  private readonly prereqs = new Map<string, Promise<void>[]>();

  constructor(
    pod: Pod,
    runningNames: readonly string[],
    private readonly clock: Clock,
  ) {
    const running = new Set(runningNames);
    const add = (name: string): Gate => {
      const g = gate();
      this.terminatedGates.set(name, g);
      if (!running.has(name)) g.open();
      return g;
    };
    const main = (pod.spec.containers ?? []).map((c) => add(c.name).done);
    let later: string | undefined;
    for (const c of [...(pod.spec.initContainers ?? [])].reverse()) {
      add(c.name);
      if (!isRestartableInitContainer(c)) continue;
      const waits = [...main];
      if (later !== undefined) waits.push(this.terminatedGates.get(later)!.done);
      this.prereqs.set(c.name, waits);
      later = c.name;
    }
  }

  /** Waits until `name` may stop (or the grace period runs out); resolves to whole seconds waited. */
  async waitForTurn(name: string, gracePeriodSeconds: number): Promise<number> {
    const waits = this.prereqs.get(name);
    if (gracePeriodSeconds <= 0 || !waits?.length) return 0;
    const start = this.clock.now();
    let cancel = () => {};
    const expired = new Promise<void>((resolve) => (cancel = this.clock.setTimer(gracePeriodSeconds * 1000, resolve)));
    await Promise.race([Promise.all(waits), expired]);
    cancel();
    return Math.floor((this.clock.now() - start) / 1000);
  }

  /** `name` has stopped. */
  containerTerminated(name: string): void {
    this.terminatedGates.get(name)?.open();
  }
}
