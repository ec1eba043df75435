import { describe, expect, it } from 'vitest';
import { CrashArm, crashable, endThreadDuring } from '../../src/shared/crash-arm.js';
import { startThreadFrom } from '../../src/workers/start-thread.js';

describe('CrashArm', () => {
  it('is claimed once per arming, by its own task type, and never on the main thread', () => {
    const arm = CrashArm.create();
    expect(arm.claim('syncPod', false)).toBe(false);
    arm.arm('syncPod');
    expect(arm.claim('relist', false)).toBe(false);
    expect(arm.claim('syncPod', true)).toBe(false);
    // Another thread's view of the same memory sees the arming.
    const other = CrashArm.attach(arm.buffer);
    expect(other.claim('syncPod', false)).toBe(true);
    expect(arm.claim('syncPod', false)).toBe(false);
    arm.arm('inspect');
    arm.arm('inspect');
    expect([arm.claim('inspect', false), arm.claim('inspect', false)]).toEqual([true, false]);
  });

  it('keeps when each arming was claimed, for the hook to log: none while armed, the claim time after', () => {
    const arm = CrashArm.create();
    expect(arm.claimedAt('relist')).toBeUndefined();
    arm.arm('relist');
    expect(arm.claimedAt('relist')).toBeUndefined();
    const other = CrashArm.attach(arm.buffer);
    expect(other.claim('relist', false, 1_764_000_000_123)).toBe(true);
    expect([arm.claimedAt('relist'), arm.claimedAt('syncPod')]).toEqual([1_764_000_000_123, undefined]);
    // A new arming forgets the last claim until it is claimed in turn.
    arm.arm('relist');
    expect(arm.claimedAt('relist')).toBeUndefined();
    expect(other.claim('relist', true, 5)).toBe(false);
    expect(arm.claimedAt('relist')).toBeUndefined();
  });

  it('crashable returns the task untouched when nothing is armed (or no arm)', async () => {
    await expect(crashable(undefined, 'relist', Promise.resolve(3))).resolves.toBe(3);
    await expect(crashable(CrashArm.create(), 'relist', Promise.resolve(4))).resolves.toBe(4);
  });
});

describe('endThreadDuring', () => {
  it('ends the thread as the task settles when that comes before the drawn moment', async () => {
    const exits: number[] = [];
    await endThreadDuring(Promise.resolve('done'), 10_000, { exit: (c) => exits.push(c), random: () => 0.99 });
    expect(exits).toEqual([70]);
  });

  it('ends the thread at the drawn moment while the task still runs', async () => {
    const exits: number[] = [];
    let settled = false;
    const task = new Promise((r) => setTimeout(r, 60_000)).then(() => (settled = true));
    await endThreadDuring(task, 20, { exit: (c) => exits.push(c), random: () => 0.5 });
    expect([exits, settled]).toEqual([[70], false]);
  });

  it('on a real worker thread, an armed task ends that thread (exit 70) before its result is sent', async () => {
    const arm = CrashArm.create();
    arm.arm('syncPod');
    const armedAt = Date.now();
    const w = startThreadFrom(new URL('../helpers/crash-arm-worker.js', import.meta.url), { arm: arm.buffer });
    const messages: unknown[] = [];
    w.on('message', (m) => messages.push(m));
    const exitCode = await new Promise<number>((resolve) => w.once('exit', resolve));
    expect([exitCode, messages]).toEqual([70, []]);
    // The thread wrote when it claimed the crash before it ended.
    expect(arm.claimedAt('syncPod')).toBeGreaterThanOrEqual(armedAt);
    // Claimed: the next task of the type is not crashed.
    expect(arm.claim('syncPod', false)).toBe(false);
  });
});
