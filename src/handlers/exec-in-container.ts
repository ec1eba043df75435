/**
 * Running a command in a container through CRI ExecSync, shared by exec
 * probes and exec lifecycle hooks (upstream kuberuntime RunInContainer over
 * remoteRuntimeService.ExecSync).
 *
 * - The runtime gets the timeout in seconds (0 = none). The call's own
 *   deadline is the timeout plus runtimeRequestTimeout, leaving the runtime
 *   time to clean up; with no timeout the call has no deadline (a year).
 * - A DeadlineExceeded answer means the command timed out:
 *   ExecTimeoutError `command "<cmd>" timed out`.
 * - Output is stdout followed by stderr, as upstream combines them.
 */
import type { CriApi } from '../cri/client.js';
import { CriDeadlineError } from '../common/errors.js';

/** A year: gRPC needs a deadline, upstream sets none for hooks. */
const NO_DEADLINE_MS = 365 * 24 * 3600 * 1000;

export interface ExecOutcome {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout then stderr. */
  output: Buffer;
}

export class ExecTimeoutError extends Error {
  override readonly name = 'ExecTimeoutError';
}

export interface ExecOptions {
  /** Seconds; 0 = no timeout. */
  timeoutSeconds: number;
  /** The client's runtimeRequestTimeout, added to the timeout as the call's deadline. */
  runtimeRequestTimeoutMs: number;
  signal?: AbortSignal;
}

/** Runs `cmd` in the container. Throws ExecTimeoutError on a timeout, the CRI error otherwise; a non-zero exit is a result. */
export async function execInContainer(cri: CriApi, containerId: string, cmd: readonly string[], opts: ExecOptions): Promise<ExecOutcome> {
  const timeoutMs = opts.timeoutSeconds > 0 ? opts.timeoutSeconds * 1000 + opts.runtimeRequestTimeoutMs : NO_DEADLINE_MS;
  try {
    const r = await cri.execSync(
      { containerId, cmd: [...cmd], timeout: BigInt(Math.max(0, Math.floor(opts.timeoutSeconds))) },
      { timeoutMs, signal: opts.signal },
    );
    const stdout = Buffer.from(r.stdout);
    const stderr = Buffer.from(r.stderr);
    return { exitCode: r.exitCode, stdout, stderr, output: Buffer.concat([stdout, stderr]) };
  } catch (err) {
    if (err instanceof CriDeadlineError) throw new ExecTimeoutError(`command ${JSON.stringify(cmd.join(' '))} timed out`, { cause: err });
    throw err;
  }
}

/** Upstream's CodeExitError text for a non-zero exit: `command 'a b' exited with 1: <stderr>`. */
export function exitErrorMessage(cmd: readonly string[], outcome: ExecOutcome): string {
  return `command '${cmd.join(' ')}' exited with ${outcome.exitCode}: ${outcome.stderr.toString()}`;
}
