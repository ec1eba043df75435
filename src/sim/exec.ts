/**
 * ExecSync answers. The command runs through the same small shell as
 * container behaviour (behaviour.ts) with two differences: `cat PATH` reads the
 * container's simulated files (set through the control interface), and an
 * unmodelled command fails the way runc does (`sh -c` prints `not found` and
 * exits 127; a direct argv is an OCI exec error).
 */
import { status } from '@grpc/grpc-js';
import { CriError } from '../common/errors.js';
import { collect, runArgv, type Outcome, type Plan, type ShellEnv } from './behaviour.js';

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** How long the command runs before it answers. */
  durationMs: number;
  /** True when the command never ends by itself (e.g. `sleep infinity`). */
  forever: boolean;
}

function execShell(files: ReadonlyMap<string, string>): ShellEnv {
  return {
    extra(name, args) {
      if (name !== 'cat') return undefined;
      const output: Outcome['output'] = [];
      let code = 0;
      for (const p of args) {
        const content = files.get(p);
        if (content === undefined) {
          output.push({ atMs: 0, stream: 'stderr', text: `cat: can't open '${p}': No such file or directory\n` });
          code = 1;
        } else {
          output.push({ atMs: 0, stream: 'stdout', text: content });
        }
      }
      return { status: code, output, durationMs: 0 };
    },
    unknown(name, _argv, inShell) {
      if (inShell) return { status: 127, output: [{ atMs: 0, stream: 'stderr', text: `sh: ${name}: not found\n` }], durationMs: 0 };
      throw new CriError(
        `failed to exec in container: failed to start exec: OCI runtime exec failed: exec failed: unable to start container process: exec: "${name}": executable file not found in $PATH: unknown`,
        'ExecSync',
        status.UNKNOWN,
      );
    },
    unsupported(_script, reason) {
      return { status: 2, output: [{ atMs: 0, stream: 'stderr', text: `sh: ${reason}\n` }], durationMs: 0 };
    },
  };
}

/** Decides what `cmd` prints and returns. Throws CriError for an unknown direct command. */
export function planExec(cmd: readonly string[], files: ReadonlyMap<string, string>): ExecResult {
  if (cmd.length === 0) {
    throw new CriError('failed to exec in container: failed to create exec: process args are empty', 'ExecSync', status.UNKNOWN);
  }
  const plan: Plan = runArgv(cmd, execShell(files));
  return {
    stdout: collect(plan, 'stdout'),
    stderr: collect(plan, 'stderr'),
    exitCode: plan.exit?.code ?? 0,
    durationMs: plan.exit?.atMs ?? 0,
    forever: plan.exit === undefined,
  };
}

/** containerd's message for an exec that outlives its timeout (Go duration formatting for whole seconds). */
export function execTimeoutError(timeoutSec: number): CriError {
  return new CriError(
    `failed to exec in container: timeout ${timeoutSec}s exceeded: context deadline exceeded`,
    'ExecSync',
    status.DEADLINE_EXCEEDED,
  );
}
