/**
 * The node lease (upstream component-helpers lease controller, as the kubelet
 * runs it): `kube-node-lease/<node>` with holderIdentity = the node,
 * leaseDurationSeconds = nodeLeaseDurationSeconds, renewed every 0.25 × that.
 *
 * - A renewal updates the lease last written, without a GET first; if that
 *   fails, the lease is re-read (or created, with an owner reference to the
 *   Node; not before the Node exists) with a backoff of 200 ms doubling to 7 s.
 * - Each renewal tries up to 5 updates; a 409 re-reads the lease and tries again;
 *   from the second failure on, `onRepeatedFailure` runs (upstream closes the
 *   heartbeat client's idle connections).
 * - The loop waits renewInterval after each sync finishes. It runs on its own
 *   client and never waits on anything else in the agent.
 */
import type { Logger } from 'pino';
import type { Lease } from '../../api/cluster.js';
import type { Clock } from '../../common/clock.js';
import { FailureLog } from '../../common/failure-log.js';
import { microTime } from '../../common/time.js';
import { isConflict, isNotFound, type RestClient } from '../apiserver/rest-client.js';

export const LEASE_NAMESPACE = 'kube-node-lease';
const MAX_UPDATE_RETRIES = 5;
const MAX_BACKOFF_MS = 7000;

export interface NodeLeaseOptions {
  client: RestClient;
  nodeName: string;
  leaseDurationSeconds: number;
  clock: Clock;
  logger: Logger;
  onRepeatedFailure?: () => void;
}

export class NodeLeaseController {
  private latest: Lease | undefined;
  readonly renewIntervalMs: number;
  private readonly path: string;
  private readonly failures: FailureLog;

  constructor(private readonly o: NodeLeaseOptions) {
    this.renewIntervalMs = o.leaseDurationSeconds * 250;
    this.failures = new FailureLog(o.logger, o.clock, 'Node lease renewal', 30_000);
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`;
  }

  /** Runs sync every renewInterval (measured from the end of the previous one) until the signal aborts. */
  start(signal: AbortSignal): void {
    const loop = async () => {
      while (!signal.aborted) {
        await this.sync(signal).catch((err: unknown) => {
          if (!signal.aborted) this.failures.failure(err);
        });
        await this.o.clock.sleep(this.renewIntervalMs, signal).catch(() => undefined);
      }
    };
    loop().catch((err: unknown) => this.o.logger.error({ err }, 'Node lease loop stopped'));
  }

  async sync(signal?: AbortSignal): Promise<void> {
    if (this.latest) {
      try {
        await this.retryUpdate(await this.newLease(this.latest, signal), signal);
        this.failures.success();
        return;
      } catch (err) {
        this.failures.failure(err, { fallback: 'ensure lease' });
      }
    }
    const ensured = await this.backoffEnsure(signal);
    if (!ensured) return; // the Node does not exist yet: no lease until it can be owned by it
    const { lease, created } = ensured;
    this.latest = lease;
    if (!created) {
      try {
        await this.retryUpdate(lease, signal);
      } catch (err) {
        this.failures.failure(err, { retryAfterSeconds: this.renewIntervalMs / 1000 });
        return;
      }
    }
    this.failures.success();
  }

  private async newLease(base: Lease | undefined, signal?: AbortSignal): Promise<Lease> {
    const lease: Lease = base
      ? structuredClone(base)
      : { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.o.nodeName, namespace: LEASE_NAMESPACE } };
    lease.spec = {
      ...lease.spec,
      holderIdentity: this.o.nodeName,
      leaseDurationSeconds: this.o.leaseDurationSeconds,
      renewTime: microTime(this.o.clock.now()),
    };
    if (!lease.metadata?.ownerReferences?.length) {
      try {
        const node = await this.o.client.get<{ metadata?: { uid?: string } }>(`/api/v1/nodes/${encodeURIComponent(this.o.nodeName)}`, {
          signal,
        });
        if (node.metadata?.uid) {
          lease.metadata = {
            ...lease.metadata,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: node.metadata.uid }],
          };
        }
      } catch (err) {
        if (!isNotFound(err))
          this.o.logger.info({ err: (err as Error).message }, 'Failed to get node when trying to set owner ref to the node lease');
      }
    }
    return lease;
  }

  /** The lease, created if missing; undefined when it is missing and the Node to own it does not exist yet. */
  private async ensure(signal?: AbortSignal): Promise<{ lease: Lease; created: boolean } | undefined> {
    try {
      return { lease: await this.o.client.get<Lease>(`${this.path}/${encodeURIComponent(this.o.nodeName)}`, { signal }), created: false };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const fresh = await this.newLease(undefined, signal);
    if (!fresh.metadata?.ownerReferences?.length) return undefined;
    const lease = await this.o.client.create<Lease>(this.path, fresh, { signal });
    return { lease, created: true };
  }

  private async backoffEnsure(signal?: AbortSignal): Promise<{ lease: Lease; created: boolean } | undefined> {
    let sleep = 100;
    for (;;) {
      try {
        return await this.ensure(signal);
      } catch (err) {
        if (signal?.aborted) throw err;
        sleep = Math.min(2 * sleep, MAX_BACKOFF_MS);
        this.failures.failure(err, { step: 'ensure lease exists', retryInSeconds: sleep / 1000 });
        await this.o.clock.sleep(sleep, signal);
      }
    }
  }

  private async retryUpdate(base: Lease, signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < MAX_UPDATE_RETRIES; i++) {
      try {
        const lease = await this.newLease(base, signal);
        this.latest = await this.o.client.replace<Lease>(`${this.path}/${encodeURIComponent(this.o.nodeName)}`, lease, { signal });
        return;
      } catch (err) {
        if (signal?.aborted) throw err;
        this.failures.failure(err, { step: 'update lease', attempt: i + 1 });
        if (isConflict(err)) {
          const ensured = await this.backoffEnsure(signal);
          if (!ensured) throw err;
          base = ensured.lease;
          continue;
        }
        if (i > 0) this.o.onRepeatedFailure?.();
      }
    }
    throw new Error(`failed ${MAX_UPDATE_RETRIES} attempts to update lease`);
  }
}
