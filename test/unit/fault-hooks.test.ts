import { EventEmitter } from 'node:events';
import { expect, it } from 'vitest';
import { FAULT_HOOKS_ENV, faultHookMode, installFaultHooks, simControlArgs } from '../../src/main/startup/fault-hooks.js';
import type { CrashTaskType } from '../../src/shared/crash-arm.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { pollUntil } from '../helpers/poll.js';

const target = (crashed = { n: 0 }, armed: CrashTaskType[] = [], claims: Partial<Record<CrashTaskType, number>> = {}) => ({
  crashWorkers: async () => (crashed.n++, 2),
  armCrash: (t: CrashTaskType) => void armed.push(t),
  crashClaimedAt: (t: CrashTaskType) => claims[t],
});

it('installs nothing, and gives the sim no control socket, unless the environment variable asks', () => {
  for (const env of [{}, { [FAULT_HOOKS_ENV]: '0' }, { [FAULT_HOOKS_ENV]: '' }]) {
    const proc = new EventEmitter();
    const { logger, records } = captureLogger();
    installFaultHooks(target(), logger, faultHookMode(env), proc);
    expect(proc.listenerCount('SIGUSR2')).toBe(0);
    expect(simControlArgs(faultHookMode(env), '/r', logger)).toEqual([]);
    expect(records).toEqual([]);
  }
});

it('refuses a value it does not know, naming the variable and the values it takes', () => {
  for (const v of ['true', 'sync', 'relistLoop']) {
    expect(() => faultHookMode({ [FAULT_HOOKS_ENV]: v })).toThrow(
      `${FAULT_HOOKS_ENV}="${v}" is not a fault hook: expected 1, relist, syncPod, inspect`,
    );
  }
});

it('with KTS_TEST_FAULT_HOOKS=1, SIGUSR2 terminates the workers, logs it, and the uninstaller removes the hook', async () => {
  const proc = new EventEmitter();
  const crashed = { n: 0 };
  const armed: CrashTaskType[] = [];
  const { logger, records } = captureLogger();
  const uninstall = installFaultHooks(target(crashed, armed), logger, faultHookMode({ [FAULT_HOOKS_ENV]: '1' }), proc);
  expect(records.some((r) => String(r.msg).includes('Test fault hooks are enabled'))).toBe(true);
  proc.emit('SIGUSR2');
  await pollUntil('the hook to log', () => records.some((r) => String(r.msg).includes('terminated the worker threads') && r.workers === 2));
  expect([crashed.n, armed]).toEqual([1, []]);
  uninstall();
  expect(proc.listenerCount('SIGUSR2')).toBe(0);
});

it('with a task type, SIGUSR2 arms a crash for that type only and logs it; the sim serves its control socket', () => {
  for (const type of ['relist', 'syncPod', 'inspect'] as const) {
    const proc = new EventEmitter();
    const crashed = { n: 0 };
    const armed: CrashTaskType[] = [];
    const { logger, records } = captureLogger();
    const env = { [FAULT_HOOKS_ENV]: type };
    installFaultHooks(target(crashed, armed), logger, faultHookMode(env), proc);
    expect(records.some((r) => String(r.msg).includes('ends the thread of the next task') && r.task === type)).toBe(true);
    proc.emit('SIGUSR2');
    proc.emit('SIGUSR2');
    expect([crashed.n, armed]).toEqual([0, [type, type]]);
    expect(records.filter((r) => String(r.msg).includes('armed a worker crash')).length).toBe(2);
    expect(simControlArgs(faultHookMode(env), '/r', logger)).toEqual(['--control', 'unix:///r/sim/ctl.sock']);
    expect(records.some((r) => String(r.msg).includes('serves its control socket') && r.socket === '/r/sim/ctl.sock')).toBe(true);
  }
});

it('logs when the armed crash is claimed, with the claim time, once per arming; nothing while unclaimed', async () => {
  const proc = new EventEmitter();
  const claims: Partial<Record<CrashTaskType, number>> = {};
  const { logger, records } = captureLogger();
  const uninstall = installFaultHooks(target({ n: 0 }, [], claims), logger, faultHookMode({ [FAULT_HOOKS_ENV]: 'syncPod' }), proc);
  const fired = () => records.filter((r) => String(r.msg).includes('the armed worker crash fired'));
  proc.emit('SIGUSR2');
  await new Promise((r) => setTimeout(r, 100));
  expect(fired()).toEqual([]);
  claims.syncPod = Date.parse('2026-11-27T20:00:00.250Z');
  await pollUntil('the hook to log the hit', () => fired().length === 1);
  expect(fired()[0]).toMatchObject({ task: 'syncPod', claimedAt: '2026-11-27T20:00:00.250Z' });
  await new Promise((r) => setTimeout(r, 100));
  expect(fired()).toHaveLength(1);
  uninstall();
});
