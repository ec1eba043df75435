import { EventEmitter } from 'node:events';
import { expect, it } from 'vitest';
import { FAULT_HOOKS_ENV, installFaultHooks } from '../../src/main/startup/fault-hooks.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { pollUntil } from '../helpers/poll.js';

it('installs nothing unless the environment variable is exactly 1', () => {
  for (const env of [{}, { [FAULT_HOOKS_ENV]: '0' }, { [FAULT_HOOKS_ENV]: 'true' }]) {
    const proc = new EventEmitter();
    let crashed = 0;
    const { logger, records } = captureLogger();
    installFaultHooks({ crashWorkers: async () => ++crashed }, logger, env, proc);
    expect(proc.listenerCount('SIGUSR2')).toBe(0);
    expect(records).toEqual([]);
  }
});

it('with KTS_TEST_FAULT_HOOKS=1, SIGUSR2 terminates the workers, logs it, and the uninstaller removes the hook', async () => {
  const proc = new EventEmitter();
  let crashed = 0;
  const { logger, records } = captureLogger();
  const uninstall = installFaultHooks({ crashWorkers: async () => (crashed++, 2) }, logger, { [FAULT_HOOKS_ENV]: '1' }, proc);
  expect(records.some((r) => String(r.msg).includes('Test fault hooks are enabled'))).toBe(true);
  proc.emit('SIGUSR2');
  await pollUntil('the hook to log', () => records.some((r) => String(r.msg).includes('terminated the worker threads') && r.workers === 2));
  expect(crashed).toBe(1);
  uninstall();
  expect(proc.listenerCount('SIGUSR2')).toBe(0);
});
