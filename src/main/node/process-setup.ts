/**
 * Host checks and process settings the agent applies before it starts
 * (upstream cmd/kubelet/app server.go run / RunKubelet):
 * - failSwapOn: refuse to start while /proc/swaps lists a swap device;
 * - oomScoreAdj: written to /proc/self/oom_score_adj (a failure, e.g. when
 *   lowering it without CAP_SYS_RESOURCE, is logged and the start goes on).
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

/** Applies oomScoreAdj to this process. */
export function applyOomScoreAdj(value: number, logger: Logger, fs: ProcFs = procFs): void {
  try {
    fs.write('/proc/self/oom_score_adj', String(value));
  } catch (err) {
    logger.info({ err: (err as Error).message, oomScoreAdj: value }, 'Failed to apply oomScoreAdj to the kubelet-ts process');
  }
}
