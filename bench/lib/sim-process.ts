/** Runs kubelet-ts-sim (the built bin) in a child process for benchmarks. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** latency: a --latency spec applied to every RPC (e.g. lognormal:0.7:5), or 'none'. */
export async function startSimProcess(
  dir: string,
  latency: string,
): Promise<{ endpoint: string; child: ChildProcess; stop: () => Promise<void> }> {
  const sock = join(dir, 'cri.sock');
  const flags = latency === 'none' ? [] : ['--latency', `default=${latency}`];
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, '..', '..', 'bin', 'kubelet-ts-sim.js'), '--listen', `unix://${sock}`, ...flags],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  for (let i = 0; !existsSync(sock); i++) {
    if (i > 600 || child.exitCode !== null) throw new Error('kubelet-ts-sim did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    endpoint: `unix://${sock}`,
    child,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}
