import type { Runtime } from '../../src/runtime/runtime.js';
import type { KnownPodIds, PodStatus, RuntimePod } from '../../src/runtime/types.js';

/**
 * An in-memory Runtime for unit tests: tests set the pods a list returns and
 * the statuses inspection returns, and can make either fail.
 */
export class FakeRuntime implements Runtime {
  pods: RuntimePod[] = [];
  statuses = new Map<string, PodStatus>();
  listError: Error | undefined;
  /** uid → error thrown by getPodStatus for that pod (until cleared). */
  statusErrors = new Map<string, Error>();
  calls = { getPods: 0, getPodStatus: [] as string[], known: [] as (KnownPodIds | undefined)[] };

  async getPods(): Promise<RuntimePod[]> {
    this.calls.getPods++;
    if (this.listError) throw this.listError;
    return structuredClone(this.pods);
  }

  async getPodStatus(uid: string, name: string, namespace: string, known?: KnownPodIds): Promise<PodStatus> {
    this.calls.getPodStatus.push(uid);
    this.calls.known.push(known);
    const err = this.statusErrors.get(uid);
    if (err) throw err;
    const status = this.statuses.get(uid);
    return status ? structuredClone(status) : { uid, name, namespace, ips: [], sandboxStatuses: [], containerStatuses: [], timestamp: 0 };
  }
}
