/**
 * Start-up phase 4: the node itself. Its name and addresses, the inputs of
 * node status (machine facts, images, runtime readiness), the resources pods
 * are admitted against, the pod CIDR handed to the runtime and, in a
 * cluster, node status with registration, the lease and mirror pods. Built,
 * not started.
 */
import os from 'node:os';
import type { CriClient } from '../../cri/client.js';
import { clusterNode as makeClusterNode, type ClusterConnection, type ClusterNode } from './cluster-node.js';
import type { EventRecorder } from '../events/event-recorder.js';
import type { EvictionManager } from '../eviction/eviction-manager.js';
import { ImageListCache } from '../images/image-list-cache.js';
import { MirrorClient } from '../kubelet/mirror-client.js';
import { nodeResources, type NodeResources } from '../kubelet/node-resources.js';
import type { RuntimeState } from '../kubelet/runtime-state.js';
import { linuxHostProbe } from '../host/host-probe.js';
import { NodeStatusInputsCollector } from '../node/node-status-inputs.js';
import { startPodCidr } from '../node/pod-cidr.js';
import { kubeletVersion } from '../../common/version.js';
import type { AgentContext } from './context.js';
import { errorMessage } from '../../common/error-message.js';

export interface AgentNode {
  hostname: string;
  imageList: ImageListCache;
  collector: NodeStatusInputsCollector;
  resources: NodeResources;
  /** Node status and lease; undefined for a standalone node. */
  clusterNode: ClusterNode | undefined;
  mirrorClient: MirrorClient | undefined;
}

export async function buildNode(
  ctx: AgentContext,
  parts: {
    cri: CriClient;
    runtimeState: RuntimeState;
    cluster: ClusterConnection | undefined;
    recorder: EventRecorder;
    /** Set once the eviction manager runs (the loops phase); pressure conditions come from it. */
    eviction: { manager?: EvictionManager };
    /** Set once the volume manager is built (the kubelet phase); status.volumesInUse comes from it. */
    volumes: { inUse?: () => string[] };
  },
): Promise<AgentNode> {
  const { config, clock, logger, signal } = ctx;
  const hostname = (config.hostnameOverride || os.hostname()).trim().toLowerCase();
  const imageList = new ImageListCache(parts.cri, clock, logger.child({ component: 'node-status' }));
  const collector = new NodeStatusInputsCollector({
    config,
    hostname,
    host: linuxHostProbe,
    cri: parts.cri,
    imageList,
    readiness: parts.runtimeState,
    underPressure: (c) => parts.eviction.manager?.underPressure(c) ?? false,
    volumesInUse: () => parts.volumes.inUse?.(),
    kubeletVersion: kubeletVersion(),
    clock,
    logger: logger.child({ component: 'node-status' }),
  });
  const addresses = await collector.refreshAddresses().catch((err: unknown) => {
    logger.error({ err: errorMessage(err) }, 'Cannot determine the node IP; pods report no hostIP until it resolves');
    return [];
  });
  const resources = nodeResources(config, collector.machine, collector.resources().allocatable, addresses, hostname);
  const podCidr = startPodCidr(parts.cri, config.podCIDR, logger.child({ component: 'runtime' }));
  const { cluster } = parts;
  const clusterNode =
    cluster &&
    makeClusterNode({
      config,
      connection: cluster,
      collector,
      runtimeState: parts.runtimeState,
      podCidr,
      recorder: parts.recorder,
      hostname,
      clock,
      logger,
      signal,
    });
  const mirrorClient =
    cluster &&
    clusterNode &&
    new MirrorClient({
      client: cluster.clients.main,
      nodeName: config.nodeName,
      node: () => clusterNode.status.node,
      logger: logger.child({ component: 'mirror-pods' }),
    });
  return { hostname, imageList, collector, resources, clusterNode, mirrorClient };
}
