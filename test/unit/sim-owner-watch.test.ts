/**
 * The simulated runtime's owner watch on a fake clock with a fake "is pid
 * alive": a live owner keeps it running, a dead or missing owner starts the
 * grace countdown, a live pid in the owner file cancels it, expiry calls
 * onOrphaned once and stops the checks. Also the pid-file helpers it reads.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pidAlive, readPidFile, removePidFile, writePidFile } from '../../src/common/pid-file.js';
import { OwnerWatch } from '../../src/sim/owner-watch.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { captureLogger } from '../helpers/capture-logger.js';

function setup(graceMs = 60_000) {
  const clock = new FakeClock();
  const alive = new Set<number>([100]);
  let owner: number | undefined = 100;
  const orphaned = vi.fn();
  const { logger, records } = captureLogger();
  const watch = new OwnerWatch({
    clock,
    graceMs,
    readOwner: () => owner,
    isAlive: (pid) => alive.has(pid),
    logger,
    onOrphaned: orphaned,
  });
  return {
    clock,
    alive,
    setOwner: (pid: number | undefined) => (owner = pid),
    orphaned,
    watch,
    messages: () => records.map((r) => r.msg),
    records,
  };
}

describe('OwnerWatch', () => {
  it('keeps running, silently, while the owner lives', () => {
    const t = setup();
    t.watch.start();
    t.clock.step(10 * 60_000);
    expect(t.orphaned).not.toHaveBeenCalled();
    expect(t.records).toEqual([]);
    expect(t.watch.check()).toBe('owned');
  });

  it('exits once the owner has been dead for the grace period, not before', () => {
    const t = setup(60_000);
    t.watch.start();
    t.clock.step(5_000);
    t.alive.delete(100);
    t.clock.step(1_000);
    expect(t.messages()).toEqual(['The owning agent is gone; exiting after the grace period unless an agent takes over']);
    expect(t.records[0]).toMatchObject({ ownerPid: 100, graceSeconds: 60 });
    t.clock.step(59_000);
    expect(t.orphaned).not.toHaveBeenCalled();
    t.clock.step(1_000);
    expect(t.orphaned).toHaveBeenCalledTimes(1);
    expect(t.messages().at(-1)).toBe('The owning agent stayed gone; exiting');
    expect(t.records).toHaveLength(2);
    expect(t.clock.pendingTimers()).toBe(0);
    t.clock.step(120_000);
    expect(t.orphaned).toHaveBeenCalledTimes(1);
    expect(t.watch.check()).toBe('expired');
  });

  it('a new live owner in the file cancels the countdown; its death starts a full one', () => {
    const t = setup(10_000);
    t.watch.start();
    t.alive.delete(100);
    t.clock.step(8_000);
    t.alive.add(200);
    t.setOwner(200);
    t.clock.step(1_000);
    expect(t.messages().at(-1)).toBe('Taken over by a new agent');
    expect(t.records.at(-1)).toMatchObject({ ownerPid: 200 });
    t.clock.step(60_000);
    expect(t.orphaned).not.toHaveBeenCalled();
    t.alive.delete(200);
    t.clock.step(1_000);
    t.clock.step(9_000);
    expect(t.orphaned).not.toHaveBeenCalled();
    t.clock.step(1_000);
    expect(t.orphaned).toHaveBeenCalledTimes(1);
    expect(t.records.at(-1)).toMatchObject({ ownerPid: 200 });
  });

  it('a missing or unreadable owner file counts as a dead owner (the last one known is logged)', () => {
    const t = setup(3_000);
    t.watch.start();
    t.setOwner(undefined);
    t.clock.step(1_000);
    expect(t.records.at(-1)).toMatchObject({ ownerPid: 100 });
    t.clock.step(3_000);
    expect(t.orphaned).toHaveBeenCalledTimes(1);
  });

  it('an owner already dead at start counts from the start', () => {
    const t = setup(2_000);
    t.alive.clear();
    t.watch.start();
    expect(t.records).toHaveLength(1);
    t.clock.step(2_000);
    expect(t.orphaned).toHaveBeenCalledTimes(1);
  });

  it('stop() ends the checks', () => {
    const t = setup(1_000);
    t.watch.start();
    t.watch.stop();
    t.alive.clear();
    t.clock.step(10_000);
    expect(t.orphaned).not.toHaveBeenCalled();
    expect(t.clock.pendingTimers()).toBe(0);
  });
});

describe('pid files', () => {
  let dir: string | undefined;
  afterEach(() => {
    vi.restoreAllMocks();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('writes atomically (no temp file left) and reads back; junk or a missing file reads as undefined', () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-pidfile-'));
    const f = join(dir, 'owner.pid');
    expect(readPidFile(f)).toBeUndefined();
    writePidFile(f, 4242);
    expect(readFileSync(f, 'utf8')).toBe('4242\n');
    expect(readPidFile(f)).toBe(4242);
    expect(readdirSync(dir)).toEqual(['owner.pid']);
    for (const junk of ['', 'abc', '0', '-5', '12 34', '1e3']) {
      writeFileSync(f, junk);
      expect(readPidFile(f)).toBeUndefined();
    }
  });

  it('removePidFile leaves a file that names another pid', () => {
    dir = mkdtempSync(join(tmpdir(), 'kts-pidfile-'));
    const f = join(dir, 'sim.pid');
    writePidFile(f, 7);
    removePidFile(f, 8);
    expect(readPidFile(f)).toBe(7);
    removePidFile(f, 7);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('pidAlive: signal 0 succeeds or fails with EPERM is alive, ESRCH is dead', () => {
    expect(pidAlive(process.pid)).toBe(true);
    expect(pidAlive(2 ** 22 + 1)).toBe(false);
    const kill = vi.spyOn(process, 'kill');
    kill.mockImplementation(() => {
      throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
    });
    expect(pidAlive(4321)).toBe(true);
    kill.mockImplementation(() => {
      throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    });
    expect(pidAlive(4321)).toBe(false);
  });
});
