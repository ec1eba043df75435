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
});
