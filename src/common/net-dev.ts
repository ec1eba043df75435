/**
 * Network interface counters of a network namespace, read as cadvisor reads
 * them (container/libcontainer networkStatsFromProc / scanInterfaceStats):
 * `/proc/<pid>/net/dev` of a process in the namespace, two header lines
 * skipped, interfaces named `lo*`, `veth*` and `docker*` (any case) left out.
 * A malformed line makes the whole file untrusted (undefined), as there.
 */
import { readFileSync } from 'node:fs';

export interface InterfaceCounters {
  name: string;
  rxBytes: bigint;
  rxErrors: bigint;
  txBytes: bigint;
  txErrors: bigint;
}

/** Upstream's defaultNetworkInterfaceName: the interface a NetworkStats reports at its top level. */
export const DEFAULT_INTERFACE = 'eth0';

const IGNORED_PREFIXES = ['lo', 'veth', 'docker'];

/** The interfaces of a /proc/net/dev text, or undefined when a line is malformed. */
export function parseNetDev(text: string): InterfaceCounters[] | undefined {
  const out: InterfaceCounters[] = [];
  const lines = text.split('\n').slice(2);
  for (const raw of lines) {
    if (raw.trim() === '') continue;
    const fields = raw.replace(/:/g, ' ').trim().split(/\s+/);
    if (fields.length !== 17 || !fields.slice(1).every((f) => /^\d+$/.test(f))) return undefined;
    const name = fields[0];
    if (IGNORED_PREFIXES.some((p) => name.toLowerCase().startsWith(p))) continue;
    out.push({
      name,
      rxBytes: BigInt(fields[1]),
      rxErrors: BigInt(fields[3]),
      txBytes: BigInt(fields[9]),
      txErrors: BigInt(fields[11]),
    });
  }
  return out;
}

/** The interfaces of the network namespace `pid` is in; undefined when the process or its file is gone. */
export function readNetDev(pid: number): InterfaceCounters[] | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/net/dev`, 'utf8');
  } catch {
    return undefined;
  }
  return parseNetDev(text);
}
