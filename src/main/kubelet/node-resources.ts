/**
 * What the pod path needs to know about this node: the NodeInfo the sync tasks
 * read (name, IP, DNS settings, memory capacity) and what admission checks
 * pods against: the allocatable resources (cpu, memory, pods,
 * ephemeral-storage, hugepages-*), the node's labels and the sysctls the
 * kernel lets pods set. They come from the node status inputs and the
 * registration labels, so admission and the Node object the apiserver sees
 * agree.
 */
import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import { value } from '../../api/quantity.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { cpuCFSQuotaOf } from '../cgroups/setup-pod-cgroups.js';
import type { NodeResources as AdmitResources } from '../admission/resources.js';
import { parseKernelVersion, safeSysctlAllowlist } from '../admission/sysctls.js';
import type { NodeAddress } from '../node/node-address.js';
import type { MachineFacts } from '../host/host-probe.js';
import { initialNode } from '../node/node-registration.js';
import type { NodeInfo } from '../../pod/sync-types.js';

export interface NodeResources {
  allocatable: AdmitResources;
  /** The node object's labels (upstream initialNode: hostname, os, arch and their beta twins, then --node-labels). */
  labels: Record<string, string>;
  /** The sysctls pods may set on this kernel (upstream SafeSysctlAllowlist). */
  sysctlAllowlist: string[];
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

/** Allocatable as admission reads it: cpu, memory and pods, ephemeral-storage when known, every other resource as scalar. */
export function admitResources(allocatable: Record<string, string>, maxPods: number): AdmitResources {
  const out: AdmitResources = {
    cpu: allocatable.cpu ?? '0',
    memory: allocatable.memory ?? '0',
    pods: allocatable.pods !== undefined ? Number(value(allocatable.pods)) : maxPods,
  };
  if (allocatable['ephemeral-storage'] !== undefined) out['ephemeral-storage'] = allocatable['ephemeral-storage'];
  const scalar = Object.entries(allocatable).filter(([k]) => !['cpu', 'memory', 'pods', 'ephemeral-storage'].includes(k));
  if (scalar.length) out.scalar = Object.fromEntries(scalar);
  return out;
}

export function nodeResources(
  config: KubeletConfig,
  machine: MachineFacts,
  allocatable: Record<string, string>,
  addresses: readonly NodeAddress[],
  hostname: string = config.nodeName,
): NodeResources {
  const labels = initialNode({
    nodeName: config.nodeName,
    hostname,
    operatingSystem: machine.operatingSystem,
    architecture: machine.architecture,
    nodeLabels: config.nodeLabels,
    taints: [],
    providerID: '',
  }).metadata?.labels;
  return {
    allocatable: admitResources(allocatable, config.maxPods),
    labels: { ...(labels ?? {}) },
    sysctlAllowlist: safeSysctlAllowlist(parseKernelVersion(release())),
    info: {
      name: config.nodeName,
      ip: addresses.find((a) => a.type === 'InternalIP')?.address ?? '',
      podLogsDir: config.podLogsDir,
      containerLogsDir: config.containerLogsDir,
      clusterDNS: config.clusterDNS,
      clusterDomain: config.clusterDomain,
      resolvConf: readResolvConf(config.resolvConf),
      memoryCapacityBytes: Number(machine.memoryBytes),
      cpuCFSQuota: cpuCFSQuotaOf(config),
      allocatable: { cpu: allocatable.cpu ?? '0', memory: allocatable.memory ?? '0' },
    },
  };
}
