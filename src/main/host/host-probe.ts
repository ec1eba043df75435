/**
 * What the node status reports about the host, read from /proc, /sys and /etc
 * (upstream gets these from cadvisor): machine identity, kernel and OS image,
 * CPU and memory capacity, hugepages, filesystem and PID usage, memory working
 * set, network interface counters. `HostProbe` is the seam; `linuxHostProbe`
 * reads the real host and test/fakes/fake-host-probe.ts has a settable one.
 */
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';
import { readNetDev, type InterfaceCounters } from '../../common/net-dev.js';

export interface MachineFacts {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  /** Go's GOOS / GOARCH names ("linux", "amd64"), as nodeInfo reports them. */
  operatingSystem: string;
  architecture: string;
  cpuCores: number;
  memoryBytes: bigint;
  /** Page size name ("2Mi") → total bytes of preallocated huge pages. */
  hugepages: Record<string, bigint>;
}

export interface FsStats {
  capacityBytes: bigint;
  availableBytes: bigint;
  inodes: bigint;
  inodesFree: bigint;
}

export interface HostProbe {
  machine(): MachineFacts;
  fsStats(path: string): FsStats;
  /** Bytes of memory not in the working set (eviction signal memory.available before capacity adjustments). */
  memoryWorkingSetBytes(): bigint;
  /** Upstream's pid.available inputs: pid_max and the number of kernel tasks. */
  pids(): { max: number; running: number };
  /** The host's interfaces (cadvisor's root container: /proc/1/net/dev, lo/veth/docker left out); undefined when unreadable. */
  network(): InterfaceCounters[] | undefined;
}

const GOARCH: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: '386',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
};

function readTrimmed(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** /proc/meminfo "Key: N kB" lines → bytes. */
function meminfo(): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const line of readTrimmed('/proc/meminfo').split('\n')) {
    const m = /^(\w+(?:\(\w+\))?):\s+(\d+)(?:\s+kB)?$/.exec(line);
    if (m) out.set(m[1], BigInt(m[2]) * (line.endsWith('kB') ? 1024n : 1n));
  }
  return out;
}

function osImage(): string {
  const text = readTrimmed('/etc/os-release') || readTrimmed('/usr/lib/os-release');
  const m = /^PRETTY_NAME=(?:"([^"]*)"|(.*))$/m.exec(text);
  return m ? (m[1] ?? m[2] ?? '').trim() : 'Unknown';
}

function hugepages(): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  let dirs: string[];
  try {
    dirs = readdirSync('/sys/kernel/mm/hugepages');
  } catch {
    return out;
  }
  for (const d of dirs) {
    const m = /^hugepages-(\d+)kB$/.exec(d);
    if (!m) continue;
    const kb = BigInt(m[1]);
    const pages = BigInt(readTrimmed(`/sys/kernel/mm/hugepages/${d}/nr_hugepages`) || '0');
    const name = kb % (1024n * 1024n) === 0n ? `${kb / (1024n * 1024n)}Gi` : kb % 1024n === 0n ? `${kb / 1024n}Mi` : `${kb}Ki`;
    out[name] = pages * kb * 1024n;
  }
  return out;
}

export const linuxHostProbe: HostProbe = {
  machine() {
    return {
      machineID: readTrimmed('/etc/machine-id') || readTrimmed('/var/lib/dbus/machine-id'),
      systemUUID: readTrimmed('/sys/class/dmi/id/product_uuid').toUpperCase(),
      bootID: readTrimmed('/proc/sys/kernel/random/boot_id'),
      kernelVersion: os.release(),
      osImage: osImage(),
      operatingSystem: process.platform,
      architecture: GOARCH[process.arch] ?? process.arch,
      cpuCores: os.availableParallelism(),
      memoryBytes: meminfo().get('MemTotal') ?? BigInt(os.totalmem()),
      hugepages: hugepages(),
    };
  },
  fsStats(path) {
    const s = statfsSync(path, { bigint: true });
    return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree };
  },
  memoryWorkingSetBytes() {
    // cgroup v1 root (as cadvisor): usage minus inactive file pages; otherwise /proc/meminfo.
    const usage = readTrimmed('/sys/fs/cgroup/memory/memory.usage_in_bytes');
    if (usage !== '') {
      const stat = readTrimmed('/sys/fs/cgroup/memory/memory.stat');
      const inactive = /^total_inactive_file (\d+)$/m.exec(stat)?.[1] ?? '0';
      const ws = BigInt(usage) - BigInt(inactive);
      return ws < 0n ? 0n : ws;
    }
    const m = meminfo();
    return (m.get('MemTotal') ?? 0n) - (m.get('MemAvailable') ?? 0n);
  },
  pids() {
    const max = Number(readTrimmed('/proc/sys/kernel/pid_max') || '32768');
    const running = Number(/\d+\/(\d+)/.exec(readTrimmed('/proc/loadavg'))?.[1] ?? '0');
    return { max, running };
  },
  network() {
    return readNetDev(1);
  },
};
