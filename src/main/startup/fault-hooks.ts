/**
 * Test-only fault hooks for the fault suite (test/faults/), switched on by
 * the environment variable KTS_TEST_FAULT_HOOKS (read once, at start):
 * - `1`: SIGUSR2 terminates every worker thread of the pool at once, with
 *   whatever they run at that moment (the PLEG relist loop, pod syncs,
 *   inspections);
 * - `relist`, `syncPod` or `inspect`: SIGUSR2 arms a crash for that task
 *   type; the next such task on a pool worker ends its own thread while in
 *   flight (src/shared/crash-arm.ts), and the hook logs when it was claimed.
 * Either way the embedded simulated runtime (`--container-runtime-endpoint=sim`)
 * also serves its control socket at `<root-dir>/sim/ctl.sock`, so the suite
 * can slow it, fail its calls and truncate its lists. The agent must recover
 * as from a worker that crashed on its own: the pool replaces the thread, the
 * failed tasks are retried, the relist loop starts again.
 *
 * Without the variable (or with `0`) nothing is installed, SIGUSR2 keeps
 * Node's default action (the process ends), as for a Go kubelet, and the sim
 * serves no control socket; any other value stops the start with an error.
 * It is not a feature for operators.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { KubeletTsError } from '../../common/errors.js';
import { CRASH_TASK_TYPES, type CrashTaskType } from '../../shared/crash-arm.js';

export const FAULT_HOOKS_ENV = 'KTS_TEST_FAULT_HOOKS';

export type FaultHookMode = 'all' | CrashTaskType;

export interface FaultHookTarget {
  /** Terminates every worker thread; resolves with how many there were. */
  crashWorkers(): Promise<number>;
  /** Arms a crash for the next task of `type` on a pool worker. */
  armCrash(type: CrashTaskType): void;
  /** When a task claimed the last armed crash of `type` (epoch ms); undefined until one has. */
  crashClaimedAt(type: CrashTaskType): number | undefined;
}

/** How often the hook looks whether an armed crash was claimed (its log line's resolution; the time logged is the claim's). */
const CLAIM_LOOK_MS = 20;

export interface FaultHookProcess {
  on(signal: 'SIGUSR2', listener: () => void): unknown;
  off(signal: 'SIGUSR2', listener: () => void): unknown;
}

/** What the environment asks for: undefined for no hooks. */
export function faultHookMode(env: NodeJS.ProcessEnv = process.env): FaultHookMode | undefined {
  const v = env[FAULT_HOOKS_ENV];
  if (v === undefined || v === '' || v === '0') return undefined;
  if (v === '1') return 'all';
  if ((CRASH_TASK_TYPES as readonly string[]).includes(v)) return v as CrashTaskType;
  throw new KubeletTsError(`${FAULT_HOOKS_ENV}="${v}" is not a fault hook: expected 1, ${CRASH_TASK_TYPES.join(', ')} or 0 (test-only)`);
}

/** The embedded sim's extra arguments under the hooks: its control socket; logged. */
export function simControlArgs(mode: FaultHookMode | undefined, rootDir: string, logger: Logger): string[] {
  if (!mode) return [];
  const socket = join(rootDir, 'sim', 'ctl.sock');
  logger.warn({ env: FAULT_HOOKS_ENV, socket }, 'Test fault hooks are enabled: the embedded simulated runtime serves its control socket');
  return ['--control', `unix://${socket}`];
}

/** Installs the hooks of `mode` (faultHookMode's answer, read once at start); returns the uninstaller (a no-op without a mode). */
export function installFaultHooks(
  target: FaultHookTarget,
  logger: Logger,
  mode: FaultHookMode | undefined,
  proc: FaultHookProcess = process,
): () => void {
  if (!mode) return () => undefined;
  if (mode === 'all') logger.warn({ env: FAULT_HOOKS_ENV }, 'Test fault hooks are enabled: SIGUSR2 terminates every worker thread');
  else
    logger.warn(
      { env: FAULT_HOOKS_ENV, task: mode },
      'Test fault hooks are enabled: SIGUSR2 ends the thread of the next task of this type',
    );
  let watch: NodeJS.Timeout | undefined;
  const onSignal = () => {
    if (mode !== 'all') {
      clearInterval(watch);
      target.armCrash(mode);
      logger.warn({ task: mode }, 'Fault hook: armed a worker crash for the next task of this type');
      // The worker that claims it cannot log (its thread ends): say here when it fired, for the suite to time from.
      watch = setInterval(() => {
        const at = target.crashClaimedAt(mode);
        if (at === undefined) return;
        clearInterval(watch);
        logger.warn({ task: mode, claimedAt: new Date(at).toISOString() }, 'Fault hook: the armed worker crash fired');
      }, CLAIM_LOOK_MS).unref();
      return;
    }
    target.crashWorkers().then(
      (n) => logger.warn({ workers: n }, 'Fault hook: terminated the worker threads'),
      (err: unknown) => logger.error({ err }, 'Fault hook: terminating the worker threads failed'),
    );
  };
  proc.on('SIGUSR2', onSignal);
  return () => {
    clearInterval(watch);
    proc.off('SIGUSR2', onSignal);
  };
}
