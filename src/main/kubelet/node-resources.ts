/**
 * What the pod path needs to know about this node: the NodeInfo the sync tasks
 * read (name, IP, DNS settings, memory capacity) and the allocatable resources
 * admission checks pods against. Both come from the node status inputs, so
 * admission and the Node object the apiserver sees agree.
 */
import { readFileSync } from 'node:fs';
import { value } from '../../api/quantity.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import type { NodeAddress } from '../node/node-address.js';
import type { MachineFacts } from '../node/host-probe.js';
import type { NodeInfo } from '../../workers/sync/sync-types.js';

export interface NodeResources {
  allocatable: { cpu: string; memory: string; pods: number };
  info: NodeInfo;
}

function readResolvConf(path: string): string {
  if (!path) return '';
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export function nodeResources(
  config: KubeletConfig,
  machine: MachineFacts,
  allocatable: Record<string, string>,
  addresses: readonly NodeAddress[],
): NodeResources {
  return {
    allocatable: {
      cpu: allocatable.cpu ?? '0',
      memory: allocatable.memory ?? '0',
      pods: allocatable.pods !== undefined ? Number(value(allocatable.pods)) : config.maxPods,
    },
    info: {
      name: config.nodeName,
      ip: addresses.find((a) => a.type === 'InternalIP')?.address ?? '',
      podLogsDir: config.podLogsDir,
      clusterDNS: config.clusterDNS,
      clusterDomain: config.clusterDomain,
      resolvConf: readResolvConf(config.resolvConf),
      memoryCapacityBytes: Number(machine.memoryBytes),
    },
  };
}
