/**
 * This node's identity and resources: capacity from the host, allocatable
 * after reservations (upstream node allocatable), and the NodeInfo the sync
 * tasks need.
 */
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { arch, availableParallelism, networkInterfaces, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { allocatable, type NodeResources as ResourceList } from '../admission/resources.js';
import { parseKernelVersion, safeSysctlAllowlist } from '../admission/sysctls.js';
import type { NodeInfo } from '../../workers/sync/sync-types.js';

export interface NodeResources {
  capacity: ResourceList;
  allocatable: ResourceList;
  /** The node object's labels (upstream initialNode: hostname, os, arch, then --node-labels). */
  labels: Record<string, string>;
  /** The sysctls pods may set on this kernel. */
  sysctlAllowlist: string[];
  info: NodeInfo;
}

/** Go's GOARCH for Node's process.arch. */
export function goArch(nodeArch: string = arch()): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    ia32: '386',
    arm64: 'arm64',
    arm: 'arm',
    ppc64: 'ppc64le',
    s390x: 's390x',
    riscv64: 'riscv64',
    loong64: 'loong64',
  };
  return map[nodeArch] ?? nodeArch;
}

/** Upstream initialNode labels (standalone). */
export function nodeLabels(nodeName: string, extra: Record<string, string>): Record<string, string> {
  const a = goArch();
  return {
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': a,
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': a,
    ...extra,
  };
}

/** Bytes of the filesystem holding `dir` (cadvisor's node filesystem capacity); undefined when it cannot be read. */
function filesystemBytes(dir: string): string | undefined {
  try {
    const s = statfsSync(dir, { bigint: true });
    return String(s.blocks * s.bsize);
  } catch {
    return undefined;
  }
}

/** Pre-allocated huge pages by size (`hugepages-2Mi` → bytes), from /sys/kernel/mm/hugepages. */
function hugePages(root = '/sys/kernel/mm/hugepages'): Record<string, string> {
  const out: Record<string, string> = {};
  let dirs: string[] = [];
  try {
    dirs = readdirSync(root);
  } catch {
    return out;
  }
  for (const d of dirs) {
    const m = /^hugepages-(\d+)kB$/.exec(d);
    if (!m) continue;
    try {
      const count = BigInt(readFileSync(join(root, d, 'nr_hugepages'), 'utf8').trim());
      const kb = BigInt(m[1]!);
      const name =
        kb % (1024n * 1024n) === 0n
          ? `hugepages-${kb / (1024n * 1024n)}Gi`
          : kb % 1024n === 0n
            ? `hugepages-${kb / 1024n}Mi`
            : `hugepages-${kb}Ki`;
      out[name] = String(count * kb * 1024n);
    } catch {
      // unreadable: leave this size out
    }
  }
  return out;
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
  const capacity: ResourceList = { cpu: String(availableParallelism()), memory: String(totalmem()), pods: config.maxPods };
  const fs = filesystemBytes(config.rootDir);
  if (fs !== undefined) capacity['ephemeral-storage'] = fs;
  const pages = hugePages();
  if (Object.keys(pages).length) capacity.scalar = pages;
  return {
    capacity,
    allocatable: allocatable(
      capacity,
      config.systemReserved,
      config.kubeReserved,
      config.evictionHard['memory.available'],
      config.evictionHard['nodefs.available'],
    ),
    labels: nodeLabels(config.nodeName, config.nodeLabels),
    sysctlAllowlist: safeSysctlAllowlist(parseKernelVersion(release())),
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
