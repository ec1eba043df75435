/**
 * The agent's cluster half, started when --kubeconfig is set: the apiserver
 * clients (after TLS bootstrap), the event sink, node registration and status,
 * and the node lease. Standalone mode (no --kubeconfig) starts none of it, as
 * upstream's kubelet without a kube client.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../../common/clock.js';
import type { ApiClients } from '../apiserver/clients.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { ApiEventSink } from '../events/event-sink.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { NodeLeaseController } from '../node/node-lease.js';
import type { NodeStatusInputsCollector } from '../node/node-status-inputs.js';
import { NodeStatusManager } from '../node/node-status-manager.js';
import type { PodCidr } from '../node/pod-cidr.js';

export interface ClusterConnection {
  clients: ApiClients;
  events: ApiEventSink;
}

export interface ConnectDeps {
  clock: Clock;
  logger: Logger;
  registry: Registry;
  signal: AbortSignal;
  version: string;
}

/** Credentials (bootstrapping if configured), clients and the event sink. */
export async function connectCluster(config: KubeletConfig, d: ConnectDeps): Promise<ClusterConnection> {
  // Loaded here, not at start-up: the clients pull in @kubernetes/client-node (its whole generated
  // API, ~40 MB of heap and code), which a standalone node never uses.
  const { connectApiserver } = await import('../apiserver/clients.js');
  const clients = await connectApiserver(config, d);
  // No request has been made yet: node registration says when the apiserver first answers.
  d.logger.info({ server: clients.main.server.href, kubeconfig: config.kubeconfig }, 'Using the apiserver');
  const events = new ApiEventSink({
    client: clients.events,
    clock: d.clock,
    logger: d.logger.child({ component: 'events' }),
    signal: d.signal,
  });
  return { clients, events };
}

export interface ClusterNodeDeps {
  config: KubeletConfig;
  connection: ClusterConnection;
  collector: NodeStatusInputsCollector;
  runtimeState: { runtimeErrors(): string[]; networkErrors(): string | undefined };
  /** Where node.spec.podCIDRs go (the runtime, through CRI UpdateRuntimeConfig). */
  podCidr: PodCidr;
  recorder: EventRecorder;
  hostname: string;
  clock: Clock;
  logger: Logger;
  signal: AbortSignal;
}

export interface ClusterNode {
  status: NodeStatusManager;
  lease: NodeLeaseController;
  /** Starts node status sync (with registration) and the node lease. */
  start(): void;
}

/** Builds node status (with registration) and the node lease; `start()` runs them. */
export function clusterNode(d: ClusterNodeDeps): ClusterNode {
  const { clients } = d.connection;
  const machine = d.collector.machine;
  const status = new NodeStatusManager({
    main: clients.main,
    heartbeat: clients.heartbeat,
    nodeName: d.config.nodeName,
    registerNode: d.config.registerNode,
    registration: {
      nodeName: d.config.nodeName,
      hostname: d.hostname,
      operatingSystem: machine.operatingSystem,
      architecture: machine.architecture,
      nodeLabels: d.config.nodeLabels,
      taints: d.config.registerWithTaints,
      providerID: d.config.providerID,
    },
    updateFrequencyMs: d.config.nodeStatusUpdateFrequency,
    reportFrequencyMs: d.config.nodeStatusReportFrequency,
    collect: () => d.collector.collect(),
    runtimeReady: () => d.runtimeState.runtimeErrors().length === 0 && d.runtimeState.networkErrors() === undefined,
    podCidr: d.podCidr,
    recorder: d.recorder,
    clock: d.clock,
    logger: d.logger.child({ component: 'node-status' }),
    onRepeatedFailure: () => clients.heartbeat.closeIdleConnections(),
  });
  const lease = new NodeLeaseController({
    client: clients.heartbeat,
    nodeName: d.config.nodeName,
    leaseDurationSeconds: d.config.nodeLeaseDurationSeconds,
    clock: d.clock,
    logger: d.logger.child({ component: 'node-lease' }),
    onRepeatedFailure: () => clients.heartbeat.closeIdleConnections(),
  });
  return {
    status,
    lease,
    start() {
      d.collector.startImageRefresh(d.signal);
      status.start(d.signal);
      lease.start(d.signal);
    },
  };
}
