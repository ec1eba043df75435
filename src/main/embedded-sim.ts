/**
 * `--container-runtime-endpoint=sim`: runs the project's simulated CRI
 * runtime as a child process on a socket under the root dir, so its CPU work
 * stays off the agent's main thread, and stops it with the agent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import { KubeletTsError } from '../common/errors.js';

export interface EmbeddedSim {
  endpoint: string;
  stop(): Promise<void>;
}

const SIM_BIN = resolve(fileURLToPath(import.meta.url), '../../../bin/kubelet-ts-sim.js');

export async function startEmbeddedSim(rootDir: string, clock: Clock, logger: Logger, extraArgs: string[] = []): Promise<EmbeddedSim> {
  const dir = join(rootDir, 'sim');
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, 'cri.sock');
  rmSync(socket, { force: true });
  const endpoint = `unix://${socket}`;
  const child: ChildProcess = spawn(process.execPath, [SIM_BIN, '--listen', endpoint, ...extraArgs], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let exited = false;
  child.once('exit', (code, sig) => {
    exited = true;
    logger.warn({ code, signal: sig }, 'embedded simulated runtime exited');
  });
  const deadline = clock.now() + 30_000;
  while (!existsSync(socket)) {
    if (exited) throw new KubeletTsError(`embedded simulated runtime (${SIM_BIN}) exited before listening on ${endpoint}`);
    if (clock.now() > deadline) {
      child.kill('SIGKILL');
      throw new KubeletTsError(`embedded simulated runtime did not listen on ${endpoint} within 30s`);
    }
    await clock.sleep(20);
  }
  logger.info({ endpoint, pid: child.pid }, 'Started the embedded simulated container runtime');
  return {
    endpoint,
    stop: async () => {
      if (exited) return;
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(timer);
    },
  };
}
