import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ContainerLogManager } from '../../src/main/logs/container-log-manager.js';
import type { TaskRequest } from '../../src/workers/protocol/protocol.js';
import type { TaskRunner } from '../../src/workers/task-runner.js';
import { FakeClock } from '../fakes/fake-clock.js';

describe('ContainerLogManager', () => {
  it('passes podLogsDir to the rotateLogs task and logs its ContainerStatus reads at debug level', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        cb();
      },
    });
    const requests: TaskRequest[] = [];
    const runner = {
      run: async (request: TaskRequest) => {
        requests.push(request);
        return { rotated: ['/logs/a/0.log'], errors: [], statusReads: 2 };
      },
    } as Pick<TaskRunner, 'run'>;
    const clock = new FakeClock();
    const manager = new ContainerLogManager({
      runner,
      clock,
      logger: pino({ level: 'debug' }, stream),
      maxSize: '10Mi',
      maxFiles: 5,
      maxWorkers: 1,
      periodMs: 10_000,
      podLogsDir: '/var/log/pods',
    });
    await manager.runOnce();
    expect(requests).toEqual([
      {
        type: 'rotateLogs',
        input: { maxSizeBytes: 10 * 1024 * 1024, maxFiles: 5, workers: 1, nowMs: clock.now(), podLogsDir: '/var/log/pods' },
      },
    ]);
    expect(lines.find((l) => l.statusReads !== undefined)).toMatchObject({ level: 20, statusReads: 2 });
  });

  it('a round where 200 containers fail (a read-only log dir) is one error line, repeated at most every 30 s, and one when it clears', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        cb();
      },
    });
    let failing = true;
    const errors = Array.from({ length: 200 }, (_, i) => `c${i}: ENOENT: no such file or directory, stat '/var/log/pods/p${i}/c/0.log'`);
    const runner = {
      run: async () => ({ rotated: [], errors: failing ? errors : [], statusReads: 0 }),
    } as unknown as Pick<TaskRunner, 'run'>;
    const clock = new FakeClock();
    const manager = new ContainerLogManager({
      runner,
      clock,
      logger: pino({ level: 'info' }, stream),
      maxSize: '10Mi',
      maxFiles: 5,
      maxWorkers: 1,
      periodMs: 10_000,
      podLogsDir: '/var/log/pods',
    });
    for (let round = 0; round < 4; round++) {
      await manager.runOnce();
      clock.step(10_000);
    }
    const errorLines = lines.filter((l) => l.level === 50);
    expect(errorLines).toHaveLength(2);
    expect(errorLines[0]).toMatchObject({ containers: 200, msg: 'Rotating the logs of running containers failed' });
    expect(String(errorLines[0].err)).toMatch(/^200 container\(s\): c0: ENOENT.*; c1: .*; c2: .* \(and 197 more\)$/);
    expect(errorLines[1]).toMatchObject({ suppressedSince: 2 });
    failing = false;
    await manager.runOnce();
    expect(lines.at(-1)).toMatchObject({ msg: 'Rotating the logs of running containers succeeded again' });
  });
});
