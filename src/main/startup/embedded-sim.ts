/**
 * `--container-runtime-endpoint=sim`: the project's simulated CRI runtime as
 * a separate process on `<root-dir>/sim/cri.sock`, so its CPU work stays off
 * the agent's main thread. Like containerd for a real kubelet, it outlives a
 * crash of its agent for a while, and a restarted agent takes it over:
 * - `<root-dir>/sim/owner.pid` holds the owning agent's pid and `sim.pid` the
 *   sim's, each written atomically. The sim runs in its own session (a
 *   terminal's Ctrl-C reaches the agent only) with `--owner-pid-file` and
 *   `--orphan-grace 60s`: it exits once no live process has owned it for that
 *   long (src/sim/owner-watch.ts).
 * - At start the agent names itself owner, then looks for a sim left by a
 *   previous agent (findLeftSim): sim.pid alive, its /proc cmdline that of
 *   the sim for this socket when readable, and the socket answering Version
 *   within 2 s. Such a sim is adopted with its pods. A sim for this socket
 *   that does not answer is killed; a live process that cannot be identified
 *   is refused (KubeletTsError naming the pid and file); a dead or unrelated
 *   pid is stale. Without an adoptable sim the stale socket is removed and a
 *   new sim spawned.
 * - stop() ends the sim, spawned or adopted: SIGTERM, SIGKILL after 5 s, and
 *   removes the pid files that still name it and this agent. That stop logs
 *   at info; an exit the agent did not ask for warns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { KubeletTsError } from '../../common/errors.js';
import { makeDirectory } from '../../common/make-dir.js';
import { pidAlive, processArgv, readPidFile, removePidFile, writePidFile } from '../../common/pid-file.js';
import { CriClient } from '../../cri/client.js';
import { runPeriodically } from '../../common/periodic.js';

export interface EmbeddedSim {
  endpoint: string;
  pid: number;
  /** Taken over from a previous agent rather than spawned. */
  adopted: boolean;
  stop(): Promise<void>;
}

const SIM_BIN = resolve(fileURLToPath(import.meta.url), '../../../../bin/kubelet-ts-sim.js');
const ORPHAN_GRACE = '60s';
const PROBE_TIMEOUT_MS = 2000;
const STOP_TIMEOUT_MS = 5000;
const LISTEN_TIMEOUT_MS = 30_000;
const WATCH_INTERVAL_MS = 1000;

/** Whether a process's argv is the kubelet-ts sim (installed bin or sources) listening on `endpoint`. */
export function isSimFor(argv: readonly string[], endpoint: string): boolean {
  const sim = argv.some((a) => /(^|\/)kubelet-ts-sim(\.js)?$/.test(a) || /(^|\/)src\/sim\/cli\.ts$/.test(a));
  const listens = argv.some((a, i) => (a === '--listen' && argv[i + 1] === endpoint) || a === `--listen=${endpoint}`);
  return sim && listens;
}

export interface LeftSimProbe {
  isAlive(pid: number): boolean;
  /** undefined when /proc does not show it. */
  argv(pid: number): string[] | undefined;
  /** Whether the socket answers Version as the sim, within a short deadline. */
  answers(): Promise<boolean>;
}

export type LeftSim = { kind: 'none' } | { kind: 'live'; pid: number } | { kind: 'hung'; pid: number };

/** What the pid in sim.pid (`pid`, from `simPidFile`) names: nothing usable, a sim to adopt, or a hung sim to kill. */
export async function findLeftSim(pid: number | undefined, endpoint: string, simPidFile: string, probe: LeftSimProbe): Promise<LeftSim> {
  if (pid === undefined || !probe.isAlive(pid)) return { kind: 'none' };
  const argv = probe.argv(pid);
  if (argv && !isSimFor(argv, endpoint)) return { kind: 'none' };
  if (await probe.answers()) return { kind: 'live', pid };
  if (argv) return { kind: 'hung', pid };
  throw new KubeletTsError(
    `process ${pid} named by ${simPidFile} is alive, does not answer on ${endpoint}, and its /proc/${pid}/cmdline cannot be read ` +
      `to tell whether it is the simulated runtime: stop that process or remove ${simPidFile}`,
  );
}

async function answersAsSim(endpoint: string, socket: string): Promise<boolean> {
  if (!existsSync(socket)) return false;
  const cri = new CriClient({ runtimeEndpoint: endpoint, timeoutMs: PROBE_TIMEOUT_MS });
  try {
    return (await cri.version({})).runtimeName === 'kubelet-ts-sim';
  } catch {
    return false;
  } finally {
    cri.close();
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Waits until `pid` is dead or timeoutMs passed; returns whether it died. */
async function waitDead(pid: number, clock: Clock, timeoutMs: number): Promise<boolean> {
  const deadline = clock.now() + timeoutMs;
  while (pidAlive(pid)) {
    if (clock.now() > deadline) return false;
    await clock.sleep(20);
  }
  return true;
}

/** SIGTERM, then SIGKILL after STOP_TIMEOUT_MS; for a process that is not this agent's child. */
async function terminate(pid: number, clock: Clock): Promise<void> {
  signal(pid, 'SIGTERM');
  if (await waitDead(pid, clock, STOP_TIMEOUT_MS)) return;
  signal(pid, 'SIGKILL');
  await waitDead(pid, clock, STOP_TIMEOUT_MS);
}

interface SimPaths {
  endpoint: string;
  socket: string;
  ownerFile: string;
  simPidFile: string;
}

function releaseFiles(paths: SimPaths, simPid: number): void {
  removePidFile(paths.simPidFile, simPid);
  removePidFile(paths.ownerFile, process.pid);
}

function adopt(paths: SimPaths, pid: number, clock: Clock, logger: Logger): EmbeddedSim {
  let stopping = false;
  const watch = new AbortController();
  const check = () => {
    if (pidAlive(pid)) return;
    watch.abort();
    if (!stopping) logger.warn({ pid }, 'Embedded simulated runtime exited unexpectedly');
  };
  runPeriodically(check, { periodMs: WATCH_INTERVAL_MS, signal: watch.signal, clock, onError: () => undefined }).catch(() => undefined);
  logger.info({ pid, endpoint: paths.endpoint }, 'Adopted the embedded simulated runtime left by a previous agent');
  return {
    endpoint: paths.endpoint,
    pid,
    adopted: true,
    stop: async () => {
      if (stopping) return;
      stopping = true;
      watch.abort();
      if (pidAlive(pid)) {
        await terminate(pid, clock);
        logger.info({ pid }, 'Stopped the embedded simulated runtime');
      }
      releaseFiles(paths, pid);
    },
  };
}

async function spawnSim(paths: SimPaths, clock: Clock, logger: Logger, extraArgs: string[]): Promise<EmbeddedSim> {
  const { endpoint, socket } = paths;
  rmSync(socket, { force: true });
  const args = [SIM_BIN, '--listen', endpoint, '--owner-pid-file', paths.ownerFile, '--orphan-grace', ORPHAN_GRACE, ...extraArgs];
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  if (child.pid === undefined) {
    const [err] = (await once(child, 'error')) as [Error];
    throw new KubeletTsError(`cannot start the embedded simulated runtime (${SIM_BIN}): ${err.message}`);
  }
  const pid = child.pid;
  writePidFile(paths.simPidFile, pid);
  child.on('error', (err) => logger.warn({ pid, err: err.message }, 'Signalling the embedded simulated runtime failed'));
  let exited = false;
  let stopping = false;
  child.once('exit', (code, sig) => {
    exited = true;
    if (stopping) logger.info({ pid, code, signal: sig }, 'Stopped the embedded simulated runtime');
    else logger.warn({ pid, code, signal: sig }, 'Embedded simulated runtime exited unexpectedly');
  });
  const deadline = clock.now() + LISTEN_TIMEOUT_MS;
  while (!existsSync(socket)) {
    if (exited) throw new KubeletTsError(`embedded simulated runtime (${SIM_BIN}) exited before listening on ${endpoint}`);
    if (clock.now() > deadline) {
      stopping = true;
      child.kill('SIGKILL');
      throw new KubeletTsError(`embedded simulated runtime did not listen on ${endpoint} within ${LISTEN_TIMEOUT_MS / 1000}s`);
    }
    await clock.sleep(20);
  }
  logger.info({ endpoint, pid }, 'Started the embedded simulated container runtime');
  return {
    endpoint,
    pid,
    adopted: false,
    stop: async () => {
      if (stopping) return;
      stopping = true;
      if (!exited) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const cancel = clock.setTimer(STOP_TIMEOUT_MS, () => child.kill('SIGKILL'));
        await done;
        cancel();
      }
      releaseFiles(paths, pid);
    },
  };
}

export async function startEmbeddedSim(rootDir: string, clock: Clock, logger: Logger, extraArgs: string[] = []): Promise<EmbeddedSim> {
  const dir = join(rootDir, 'sim');
  makeDirectory(dir, "the embedded runtime's directory");
  const socket = join(dir, 'cri.sock');
  const paths: SimPaths = {
    endpoint: `unix://${socket}`,
    socket,
    ownerFile: join(dir, 'owner.pid'),
    simPidFile: join(dir, 'sim.pid'),
  };
  writePidFile(paths.ownerFile, process.pid);
  const left = await findLeftSim(readPidFile(paths.simPidFile), paths.endpoint, paths.simPidFile, {
    isAlive: pidAlive,
    argv: processArgv,
    answers: () => answersAsSim(paths.endpoint, socket),
  });
  if (left.kind === 'live') return adopt(paths, left.pid, clock, logger);
  if (left.kind === 'hung') {
    logger.warn(
      { pid: left.pid, endpoint: paths.endpoint },
      'Killing the embedded simulated runtime left by a previous agent: it does not answer',
    );
    signal(left.pid, 'SIGKILL');
    if (!(await waitDead(left.pid, clock, STOP_TIMEOUT_MS))) {
      throw new KubeletTsError(`the embedded simulated runtime left by a previous agent (pid ${left.pid}) did not die on SIGKILL`);
    }
  }
  return spawnSim(paths, clock, logger, extraArgs);
}
