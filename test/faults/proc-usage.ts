/** A process's resident memory and open file descriptors, from /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcUsage {
  rssBytes: number;
  fds: number;
}

/** VmRSS of /proc/<pid>/status and the entries of /proc/<pid>/fd; undefined when the process is gone. */
export function procUsage(pid: number): ProcUsage | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
    if (!Number.isFinite(kb)) return undefined;
    return { rssBytes: kb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}

/**
 * The bound the suite holds an agent to after a fault: RSS at most the reference plus
 * max(30 %, 32 MiB), and at most 16 more descriptors. A fault that leaks a socket per
 * retry or keeps a killed worker's buffers exceeds it; GC timing does not.
 */
export const USAGE_BOUND = { rssRatio: 0.3, rssSlackBytes: 32 * 1024 * 1024, fdSlack: 16 };

export function withinBound(reference: ProcUsage, after: ProcUsage): { ok: boolean; why?: string } {
  const rssLimit = reference.rssBytes + Math.max(reference.rssBytes * USAGE_BOUND.rssRatio, USAGE_BOUND.rssSlackBytes);
  const fdLimit = reference.fds + USAGE_BOUND.fdSlack;
  const why: string[] = [];
  if (after.rssBytes > rssLimit)
    why.push(`RSS ${mib(after.rssBytes)} MiB > limit ${mib(rssLimit)} MiB (reference ${mib(reference.rssBytes)})`);
  if (after.fds > fdLimit) why.push(`${after.fds} fds > limit ${fdLimit} (reference ${reference.fds})`);
  return why.length ? { ok: false, why: why.join('; ') } : { ok: true };
}

export const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
