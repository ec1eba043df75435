/**
 * This node's identity and resources: capacity from the host, allocatable
 * after reservations (upstream node allocatable), and the NodeInfo the sync
 * tasks need.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, networkInterfaces, totalmem } from 'node:os';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { allocatable } from '../admission/resources.js';
import type { NodeInfo } from '../../workers/sync/sync-types.js';

export interface NodeResources {
  capacity: { cpu: string; memory: string; pods: number };
  allocatable: { cpu: string; memory: string; pods: number };
  info: NodeInfo;
}

/** The --node-ip, else the first non-internal IPv4 address, else ''. */
export function detectNodeIP(configured: string | undefined): string {
  if (configured) return configured.split(',')[0].trim();
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '';
}

function readResolvConf(path: string): string {
  if (!path) return '';
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export function nodeResources(config: KubeletConfig): NodeResources {
  const capacity = { cpu: String(availableParallelism()), memory: String(totalmem()), pods: config.maxPods };
  const evictionMemory = config.evictionHard['memory.available'];
  return {
    capacity,
    allocatable: allocatable(capacity, config.systemReserved, config.kubeReserved, evictionMemory),
    info: {
      name: config.nodeName,
      ip: detectNodeIP(config.nodeIp),
      podLogsDir: config.podLogsDir,
      clusterDNS: config.clusterDNS,
      clusterDomain: config.clusterDomain,
      resolvConf: readResolvConf(config.resolvConf),
      memoryCapacityBytes: totalmem(),
    },
  };
}
