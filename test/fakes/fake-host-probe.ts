import type { InterfaceCounters } from '../../src/common/net-dev.js';
import type { FsStats, HostProbe, MachineFacts } from '../../src/main/host/host-probe.js';

/** MachineFacts with empty identity strings, linux/amd64, 2 cores and 8 GiB unless overridden. */
export function fakeMachine(over: Partial<MachineFacts> = {}): MachineFacts {
  return {
    machineID: '',
    systemUUID: '',
    bootID: '',
    kernelVersion: '',
    osImage: '',
    operatingSystem: 'linux',
    architecture: 'amd64',
    cpuCores: 2,
    memoryBytes: 8n * 1024n ** 3n,
    hugepages: {},
    ...over,
  };
}

/** A HostProbe whose figures are public fields: what each method returns is what the test set last. */
export class FakeHostProbe implements HostProbe {
  machineFacts: MachineFacts;
  fs: FsStats = { capacityBytes: 1000n, availableBytes: 400n, inodes: 100n, inodesFree: 90n };
  workingSetBytes = 0n;
  pidFigures = { max: 4096, running: 100 };
  interfaces: InterfaceCounters[] | undefined = undefined;

  constructor(over: Partial<MachineFacts> = {}) {
    this.machineFacts = fakeMachine(over);
  }

  machine(): MachineFacts {
    return this.machineFacts;
  }

  fsStats(): FsStats {
    return this.fs;
  }

  memoryWorkingSetBytes(): bigint {
    return this.workingSetBytes;
  }

  pids(): { max: number; running: number } {
    return this.pidFigures;
  }

  network(): InterfaceCounters[] | undefined {
    return this.interfaces;
  }
}
