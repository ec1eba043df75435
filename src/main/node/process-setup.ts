/**
 * Host checks and process settings the agent applies before it starts
 * (upstream cmd/kubelet/app server.go run / RunKubelet):
 * - failSwapOn: refuse to start while /proc/swaps lists a swap device;
 * - oomScoreAdj: written to /proc/self/oom_score_adj. A failure does not stop
 *   the start and is logged at info, as upstream since v1.21
 *   (`klog.InfoS("Failed to ApplyOOMScoreAdj", "err", err)`; v1.20 warned), with
 *   Go's error text and, when the process may not lower its score (no
 *   CAP_SYS_RESOURCE, as in a container or sandbox that drops it, root
 *   included), that reason and the score it keeps.
 * The file system is injected for tests.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Logger } from 'pino';

export interface ProcFs {
  read(path: string): string;
  write(path: string, data: string): void;
}

export const procFs: ProcFs = {
  read: (p) => readFileSync(p, 'utf8'),
  write: (p, d) => writeFileSync(p, d),
};

/** Upstream's swap check: the swap devices of /proc/swaps (after its header line). */
export function swapDevices(procSwaps: string): string[] {
  return procSwaps
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The problem that stops the start, or undefined. */
export function swapProblem(failSwapOn: boolean, fs: ProcFs = procFs): string | undefined {
  if (!failSwapOn) return undefined;
  let text: string;
  try {
    text = fs.read('/proc/swaps');
  } catch {
    return undefined; // no /proc/swaps: no swap support in this kernel
  }
  const devices = swapDevices(text);
  if (devices.length === 0) return undefined;
  return `running with swap on is not supported: disable swap (swapoff -a), or set failSwapOn: false (--fail-swap-on=false). /proc/swaps contains: ${JSON.stringify(devices)}`;
}

const OOM_SCORE_ADJ = '/proc/self/oom_score_adj';
/** linux/capability.h CAP_SYS_RESOURCE: needed to lower oom_score_adj. */
const CAP_SYS_RESOURCE = 24n;

/** Go's text for the errno of a failed write (os.PathError). */
function goWriteError(path: string, err: NodeJS.ErrnoException): string {
  const text: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ENOENT: 'no such file or directory',
    EINVAL: 'invalid argument',
  };
  return `write ${path}: ${(err.code && text[err.code]) ?? err.message}`;
}

/** Whether /proc/self/status shows CAP_SYS_RESOURCE in the effective set; undefined when unreadable. */
function hasSysResource(fs: ProcFs): boolean | undefined {
  try {
    const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(fs.read('/proc/self/status'))?.[1];
    return hex === undefined ? undefined : ((BigInt(`0x${hex}`) >> CAP_SYS_RESOURCE) & 1n) === 1n;
  } catch {
    return undefined;
  }
}

/** Applies oomScoreAdj to this process (upstream ApplyOOMScoreAdj(0, oomScoreAdj)). */
export function applyOomScoreAdj(value: number, logger: Logger, fs: ProcFs = procFs): void {
  try {
    fs.write(OOM_SCORE_ADJ, String(value));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    let current: number | undefined;
    try {
      current = Number.parseInt(fs.read(OOM_SCORE_ADJ).trim(), 10);
    } catch {
      current = undefined;
    }
    const denied = err.code === 'EACCES' || err.code === 'EPERM';
    const cannotLower = denied && current !== undefined && value < current && hasSysResource(fs) === false;
    logger.info(
      {
        err: goWriteError(OOM_SCORE_ADJ, err),
        oomScoreAdj: value,
        ...(current !== undefined && !Number.isNaN(current) && { kept: current }),
        ...(cannotLower && { reason: 'lowering oom_score_adj needs CAP_SYS_RESOURCE, which this process does not have' }),
      },
      'Failed to ApplyOOMScoreAdj',
    );
  }
}
