/**
 * Test-only fault hooks for the fault suite (test/faults/): with the
 * environment variable KTS_TEST_FAULT_HOOKS=1, SIGUSR2 terminates every
 * worker thread of the pool at once, with whatever they run at that moment
 * (the PLEG relist loop, pod syncs, inspections). The agent must recover as
 * from a worker that crashed on its own: the pool replaces the threads, the
 * failed tasks are retried, the relist loop starts again.
 *
 * Without the variable nothing is installed and SIGUSR2 keeps Node's default
 * action (the process ends), as for a Go kubelet: the hook cannot be switched
 * on by a signal alone. It is not a feature for operators; the variable is
 * read once, at start.
 */
import type { Logger } from 'pino';

export const FAULT_HOOKS_ENV = 'KTS_TEST_FAULT_HOOKS';

export interface FaultHookTarget {
  /** Terminates every worker thread; resolves with how many there were. */
  crashWorkers(): Promise<number>;
}

export interface FaultHookProcess {
  on(signal: 'SIGUSR2', listener: () => void): unknown;
  off(signal: 'SIGUSR2', listener: () => void): unknown;
}

/** Installs the hooks when `env` asks for them; returns the uninstaller (a no-op otherwise). */
export function installFaultHooks(
  target: FaultHookTarget,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  proc: FaultHookProcess = process,
): () => void {
  if (env[FAULT_HOOKS_ENV] !== '1') return () => undefined;
  logger.warn({ env: FAULT_HOOKS_ENV }, 'Test fault hooks are enabled: SIGUSR2 terminates every worker thread');
  const onSignal = () => {
    target.crashWorkers().then(
      (n) => logger.warn({ workers: n }, 'Fault hook: terminated the worker threads'),
      (err: unknown) => logger.error({ err }, 'Fault hook: terminating the worker threads failed'),
    );
  };
  proc.on('SIGUSR2', onSignal);
  return () => proc.off('SIGUSR2', onSignal);
}
