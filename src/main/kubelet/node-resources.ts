/**
 * What the pod path needs to know about this node: the NodeInfo the sync tasks
 * read (name, IP, DNS settings, memory capacity) and the allocatable resources
 * admission checks pods against. Both come from the node status inputs, so
 * admission and the Node object the apiserver sees agree.
 */
import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import { value } from '../../api/quantity.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import type { NodeAddress } from '../node/node-address.js';
import type { MachineFacts } from '../node/host-probe.js';
import { initialNode } from '../node/node-registration.js';
import type { NodeResources as ResourceList } from '../admission/resources.js';
import { parseKernelVersion, safeSysctlAllowlist } from '../admission/sysctls.js';
import type { NodeInfo } from '../../workers/sync/sync-types.js';

export interface NodeResources {
  allocatable: ResourceList;
  /** The node object's labels (upstream initialNode: hostname, os, arch, then --node-labels). */
  labels: Record<string, string>;
  /** The sysctls pods may set on this kernel. */
  sysctlAllowlist: string[];
  info: NodeInfo;
}

/** Node status allocatable (canonical quantity strings) in admission's shape. */
function admissionAllocatable(allocatable: Record<string, string>, maxPods: number): ResourceList {
  const out: ResourceList = {
    cpu: allocatable.cpu ?? '0',
    memory: allocatable.memory ?? '0',
    pods: allocatable.pods !== undefined ? Number(value(allocatable.pods)) : maxPods,
  };
  const scalar: Record<string, string> = {};
  for (const [name, q] of Object.entries(allocatable)) {
    if (name === 'cpu' || name === 'memory' || name === 'pods') continue;
    if (name === 'ephemeral-storage') out['ephemeral-storage'] = q;
    else scalar[name] = q;
  }
  if (Object.keys(scalar).length > 0) out.scalar = scalar;
  return out;
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
  hostname: string,
): NodeResources {
  const registered = initialNode({
    nodeName: config.nodeName,
    hostname,
    operatingSystem: machine.operatingSystem,
    architecture: machine.architecture,
    nodeLabels: config.nodeLabels,
    taints: [],
    providerID: '',
  });
  return {
    allocatable: admissionAllocatable(allocatable, config.maxPods),
    labels: registered.metadata?.labels ?? {},
    sysctlAllowlist: safeSysctlAllowlist(parseKernelVersion(release())),
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
