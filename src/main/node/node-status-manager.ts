/**
 * Node registration and node status (upstream kubelet_node_status.go):
 * - `syncNodeStatus` runs every nodeStatusUpdateFrequency (10 s): it registers
 *   the node first when --register-node (create; if it exists, reconcile it),
 *   retrying registration with a backoff of 100 ms doubling to 7 s; then it
 *   computes the status and patches `nodes/<name>/status` when the status
 *   changed or nodeStatusReportFrequency (5 min) passed since the last report;
 *   up to 5 tries per sync (the first reads the node from the apiserver's cache,
 *   resourceVersion=0). Each update first passes node.spec.podCIDRs to the
 *   runtime when they changed (CRI UpdateRuntimeConfig, pod-cidr.ts), and a
 *   change is reported even if the status is the same.
 * - `fastStatusUpdate` at start polls every 100 ms until the runtime is ready and
 *   then syncs at once, so the node turns Ready without waiting a period.
 * - Node events (NodeHasSufficientMemory, NodeReady, …) go to the recorder.
 * Runs on the heartbeat client (registration on the main one); never blocks
 * anything else in the agent, and logs a failing apiserver once per interval.
 */
import type { Logger } from 'pino';
import type { Node } from '../../api/cluster.js';
import type { Clock } from '../../common/clock.js';
import { FailureLog } from '../../common/failure-log.js';
import { runPeriodically } from '../../common/periodic.js';
import { isAlreadyExists, type RestClient } from '../apiserver/rest-client.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { nodeReference } from '../events/event-recorder.js';
import { initialNode, reconcileExistingNode, type RegistrationSpec } from './node-registration.js';
import { nodeStatusPatch } from './node-status-patch.js';
import { nodeStatusChanged, setNodeStatus, type NodeStatusInputs, type NodeStatusMemory } from './node-status-setters.js';
import { errorMessage } from '../../common/error-message.js';

const STATUS_UPDATE_RETRIES = 5;
const REGISTER_MAX_BACKOFF_MS = 7000;
const FAST_UPDATE_PERIOD_MS = 100;
/** Upstream nodeReadyGracePeriod: how long the fast update waits for the runtime. */
const FAST_UPDATE_WINDOW_MS = 120_000;

export interface NodeStatusManagerOptions {
  main: RestClient;
  heartbeat: RestClient;
  nodeName: string;
  registerNode: boolean;
  registration: RegistrationSpec;
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  collect: () => Promise<NodeStatusInputs>;
  /** True once the runtime reports ready (fast status update). */
  runtimeReady: () => boolean;
  /** Passes node.spec.podCIDRs to the runtime (pod-cidr.ts); resolves whether they changed. */
  podCidr?: { update(cidr: string): Promise<boolean> };
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  onRepeatedFailure?: () => void;
}

export class NodeStatusManager {
  private registered = false;
  private readonly registeredWaiters: (() => void)[] = [];
  private lastReport = -Infinity;
  private syncing: Promise<void> | undefined;
  private readonly failures: FailureLog;
  private readonly nodePath: string;
  private readonly memory: NodeStatusMemory = { lastUnschedulable: false };
  /** The node as the apiserver last returned it. */
  node: Node | undefined;

  constructor(private readonly options: Readonly<NodeStatusManagerOptions>) {
    this.failures = new FailureLog(options.logger, options.clock, 'Node status update', 30_000);
    this.nodePath = `/api/v1/nodes/${encodeURIComponent(options.nodeName)}`;
  }

  get registrationCompleted(): boolean {
    return this.registered;
  }

  /** Resolves once the node is registered (at once with --register-node=false). */
  whenRegistered(): Promise<void> {
    if (this.registered || !this.options.registerNode) return Promise.resolve();
    return new Promise((r) => this.registeredWaiters.push(r));
  }

  /** Starts the periodic sync and the fast first update. */
  start(signal: AbortSignal): void {
    // upstream wait.Until(syncNodeStatus, nodeStatusUpdateFrequency): now, then a period after each ends.
    // A sync catches its own failures (FailureLog); what reaches onError is a bug, logged.
    const onError = (err: unknown) => this.options.logger.error({ err }, 'Node status sync failed');
    runPeriodically(() => this.syncNodeStatus(signal), {
      periodMs: this.options.updateFrequencyMs,
      immediate: true,
      signal,
      clock: this.options.clock,
      onError,
    }).catch(onError);
    this.fastStatusUpdate(signal).catch((err: unknown) => this.options.logger.error({ err }, 'Fast node status update failed'));
  }

  private async fastStatusUpdate(signal: AbortSignal): Promise<void> {
    const deadline = this.options.clock.now() + FAST_UPDATE_WINDOW_MS;
    while (!signal.aborted && this.options.clock.now() < deadline) {
      if (this.options.runtimeReady() && (this.registered || !this.options.registerNode)) {
        await this.syncNodeStatus(signal);
        return;
      }
      await this.options.clock.sleep(FAST_UPDATE_PERIOD_MS, signal).catch(() => undefined);
    }
  }

  /** One sync; concurrent callers share the one in flight (upstream's syncNodeStatusMux). */
  syncNodeStatus(signal?: AbortSignal): Promise<void> {
    this.syncing ??= this.doSync(signal).finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private record = (type: 'Normal' | 'Warning', reason: string, message?: string) =>
    this.options.recorder.record(
      nodeReference(this.options.nodeName),
      type,
      reason,
      message ?? `Node ${this.options.nodeName} status is now: ${reason}`,
    );

  private async doSync(signal?: AbortSignal): Promise<void> {
    if (this.options.registerNode && !this.registered) await this.registerWithApiServer(signal);
    if (signal?.aborted) return;
    for (let i = 0; i < STATUS_UPDATE_RETRIES; i++) {
      try {
        await this.tryUpdateNodeStatus(i, signal);
        this.failures.success();
        return;
      } catch (err) {
        if (signal?.aborted) return;
        if (i > 0) this.options.onRepeatedFailure?.();
        this.failures.failure(err, { attempt: i + 1 });
      }
    }
  }

  private async tryUpdateNodeStatus(tryNumber: number, signal?: AbortSignal): Promise<void> {
    const query = tryNumber === 0 ? { resourceVersion: '0' } : {};
    const original = await this.options.heartbeat.get<Node>(this.nodePath, { query, signal });
    const node = structuredClone(original);
    const podCIDRChanged = await this.updatePodCIDR(original);
    const inputs = await this.options.collect();
    setNodeStatus(node, inputs, this.record, this.memory);
    const now = this.options.clock.now();
    if (now - this.lastReport < this.options.reportFrequencyMs && !podCIDRChanged && !nodeStatusChanged(original.status, node.status)) {
      this.node = original;
      return;
    }
    const patch = nodeStatusPatch(original.status, node.status!);
    this.node = patch ? await this.options.heartbeat.patch<Node>(`${this.nodePath}/status`, patch, 'strategic', { signal }) : original;
    this.lastReport = now;
  }

  /**
   * Upstream tryUpdateNodeStatus' first step: the node's pod CIDRs (set by the node IPAM controller or by
   * hand) go to the runtime when they changed. True when they changed, or when the runtime refused them
   * (logged; upstream reports the node status then too).
   */
  private async updatePodCIDR(node: Node): Promise<boolean> {
    const cidrs = node.spec?.podCIDRs ?? [];
    if (cidrs.length === 0 || !this.options.podCidr) return false;
    return this.options.podCidr.update(cidrs.join(',')).catch((err: unknown) => {
      this.options.logger.error({ err: errorMessage(err) }, 'Failed to update the pod CIDR');
      return true;
    });
  }

  /** Upstream registerWithAPIServer: retries until the node is registered (or the agent stops). */
  private async registerWithApiServer(signal?: AbortSignal): Promise<void> {
    let backoff = 100;
    const failures = new FailureLog(this.options.logger, this.options.clock, 'Node registration', 30_000);
    while (!this.registered && !signal?.aborted) {
      try {
        await this.tryRegister(signal);
        this.registered = true;
        for (const w of this.registeredWaiters.splice(0)) w();
        failures.success();
        this.options.logger.info({ node: this.options.nodeName }, 'Successfully registered node');
        return;
      } catch (err) {
        if (signal?.aborted) return;
        failures.failure(err, { node: this.options.nodeName });
        await this.options.clock.sleep(backoff, signal).catch(() => undefined);
        backoff = Math.min(backoff * 2, REGISTER_MAX_BACKOFF_MS);
      }
    }
  }

  private async tryRegister(signal?: AbortSignal): Promise<void> {
    const node = initialNode(this.options.registration);
    setNodeStatus(node, await this.options.collect(), this.record, this.memory);
    try {
      this.node = await this.options.main.create<Node>('/api/v1/nodes', node, { signal });
      this.lastReport = this.options.clock.now();
      return;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    this.options.logger.info({ node: this.options.nodeName }, 'Node was previously registered');
    const existing = await this.options.main.get<Node>(this.nodePath, { signal });
    const patch = reconcileExistingNode(node, existing);
    this.node = patch ? await this.options.main.patch<Node>(`${this.nodePath}/status`, patch, 'strategic', { signal }) : existing;
  }
}
