/**
 * The node lease (upstream component-helpers lease controller, as the kubelet
 * runs it): `kube-node-lease/<node>` with holderIdentity = the node,
 * leaseDurationSeconds = nodeLeaseDurationSeconds, renewed every 0.25 × that,
 * stretched at random by up to 4 % (upstream wait.JitterUntil(sync, interval, 0.04)).
 *
 * - A renewal updates (PUT) the lease last written with only its renewTime
 *   changed, as upstream's newLease: holder and duration are set when the
 *   lease is created, and another writer's values are kept; no GET first. If that
 *   fails, the lease is re-read (or created, with an owner reference to the
 *   Node; not before the Node exists) with a backoff of 200 ms doubling to 7 s.
 * - Each renewal tries up to 5 updates; a 409 re-reads the lease and tries again;
 *   from the second failure on, `onRepeatedFailure` runs (upstream closes the
 *   heartbeat client's idle connections).
 * - The period counts from the end of each sync (sliding). It runs on its own
 *   client and never waits on anything else in the agent.
 */
import type { Logger } from 'pino';
import type { Lease } from '../../api/cluster.js';
import type { Clock } from '../../common/clock.js';
import { FailureLog } from '../../common/failure-log.js';
import { runPeriodically } from '../../common/periodic.js';
import { microTime } from '../../common/time.js';
import { isConflict, isNotFound, type RestClient } from '../apiserver/rest-client.js';
import { errorMessage } from '../../common/error-message.js';

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
  /** For tests: the random source of the jitter (default Math.random). */
  random?: () => number;
}

/** Upstream's jitter factor of the lease controller's renew loop. */
export const RENEW_JITTER_FACTOR = 0.04;

export class NodeLeaseController {
  private latest: Lease | undefined;
  readonly renewIntervalMs: number;
  private readonly path: string;
  private readonly failures: FailureLog;

  constructor(private readonly options: Readonly<NodeLeaseOptions>) {
    this.renewIntervalMs = options.leaseDurationSeconds * 250;
    this.failures = new FailureLog(options.logger, options.clock, 'Node lease renewal', 30_000);
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`;
  }

  /** Runs sync now, then every renewInterval plus jitter after the previous one ends, until the signal aborts. */
  start(signal: AbortSignal): void {
    const onError = (err: unknown) => {
      if (!signal.aborted) this.failures.failure(err);
    };
    runPeriodically(() => this.sync(signal), {
      periodMs: this.renewIntervalMs,
      jitterFactor: RENEW_JITTER_FACTOR,
      immediate: true,
      signal,
      clock: this.options.clock,
      onError,
      ...(this.options.random && { random: this.options.random }),
    }).catch((err: unknown) => this.options.logger.error({ err }, 'Node lease loop stopped'));
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

  /** Upstream newLease: a copy of `base` with a new renewTime, or a new lease held by this node. */
  private async newLease(base: Lease | undefined, signal?: AbortSignal): Promise<Lease> {
    const lease: Lease = base
      ? structuredClone(base)
      : {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.options.nodeName, namespace: LEASE_NAMESPACE },
          spec: { holderIdentity: this.options.nodeName, leaseDurationSeconds: this.options.leaseDurationSeconds },
        };
    lease.spec = { ...lease.spec, renewTime: microTime(this.options.clock.now()) };
    if (!lease.metadata?.ownerReferences?.length) {
      try {
        const node = await this.options.client.get<{ metadata?: { uid?: string } }>(
          `/api/v1/nodes/${encodeURIComponent(this.options.nodeName)}`,
          {
            signal,
          },
        );
        if (node.metadata?.uid) {
          lease.metadata = {
            ...lease.metadata,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.options.nodeName, uid: node.metadata.uid }],
          };
        }
      } catch (err) {
        if (!isNotFound(err))
          this.options.logger.info({ err: errorMessage(err) }, 'Failed to get node when trying to set owner ref to the node lease');
      }
    }
    return lease;
  }

  /** The lease, created if missing; undefined when it is missing and the Node to own it does not exist yet. */
  private async ensure(signal?: AbortSignal): Promise<{ lease: Lease; created: boolean } | undefined> {
    try {
      return {
        lease: await this.options.client.get<Lease>(`${this.path}/${encodeURIComponent(this.options.nodeName)}`, { signal }),
        created: false,
      };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const fresh = await this.newLease(undefined, signal);
    if (!fresh.metadata?.ownerReferences?.length) return undefined;
    const lease = await this.options.client.create<Lease>(this.path, fresh, { signal });
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
        await this.options.clock.sleep(sleep, signal);
      }
    }
  }

  private async retryUpdate(base: Lease, signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < MAX_UPDATE_RETRIES; i++) {
      try {
        const lease = await this.newLease(base, signal);
        this.latest = await this.options.client.replace<Lease>(`${this.path}/${encodeURIComponent(this.options.nodeName)}`, lease, {
          signal,
        });
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
        if (i > 0) this.options.onRepeatedFailure?.();
      }
    }
    throw new Error(`failed ${MAX_UPDATE_RETRIES} attempts to update lease`);
  }
}
