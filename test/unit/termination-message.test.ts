import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerState, type ContainerStatus } from '../../src/gen/runtime/v1/api.js';
import { capMessages, lastLogMessage, terminationMessage } from '../../src/runtime/termination-message.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kts-tmsg-'));
  await writeFile(join(dir, 'written'), 'disk full\n');
  await writeFile(join(dir, 'empty'), '');
  await writeFile(join(dir, 'big'), 'x'.repeat(5000) + 'END');
  const lines = Array.from({ length: 100 }, (_, i) => `2026-11-23T01:00:00.${i}Z stdout F line ${i}`);
  await writeFile(
    join(dir, 'app.log'),
    [...lines, '2026-11-23T01:00:01Z stderr P partial-', '2026-11-23T01:00:01Z stderr F end', ''].join('\n'),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const status = (o: { file?: string; policy?: string; exitCode?: number; state?: ContainerState; reason?: string }): ContainerStatus =>
  ({
    state: o.state ?? ContainerState.CONTAINER_EXITED,
    exitCode: o.exitCode ?? 1,
    reason: o.reason ?? 'Error',
    annotations: {
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': o.policy ?? 'File',
    },
    mounts: o.file ? [{ containerPath: '/dev/termination-log', hostPath: join(dir, o.file) }] : [],
    logPath: join(dir, 'app.log'),
  }) as unknown as ContainerStatus;

describe('terminationMessage (upstream getTerminationMessage)', () => {
  it.each([
    ['the file the container wrote', { file: 'written' }, 'disk full\n'],
    ['nothing for a running container', { file: 'written', state: ContainerState.CONTAINER_RUNNING }, ''],
    ['an empty file with policy File', { file: 'empty' }, ''],
    ['a missing file', { file: 'nope' }, ''],
    ['the last 4 KiB of a large file', { file: 'big' }, 'x'.repeat(4093) + 'END'],
    ['the file even with FallbackToLogsOnError when it is not empty', { file: 'written', policy: 'FallbackToLogsOnError' }, 'disk full\n'],
    ['no logs when the container succeeded', { file: 'empty', policy: 'FallbackToLogsOnError', exitCode: 0 }, ''],
    ['no logs when it could not even run', { file: 'empty', policy: 'FallbackToLogsOnError', reason: 'ContainerCannotRun' }, ''],
  ])('%s', async (_n, o, want) => {
    expect(await terminationMessage(status(o))).toBe(want);
  });

  it('FallbackToLogsOnError with an empty file: the tail of the log (80 lines, at most 2 KiB)', async () => {
    const msg = await terminationMessage(status({ file: 'empty', policy: 'FallbackToLogsOnError' }));
    expect(msg.endsWith('line 99\npartial-end\n')).toBe(true);
    expect(msg).not.toContain('line 21\n');
    expect(Buffer.byteLength(msg)).toBeLessThanOrEqual(2048);
    expect(await lastLogMessage(join(dir, 'app.log'), 4, 10_000)).toBe('line 98\nline 99\npartial-end\n');
  });

  it('caps a pod’s messages to equal shares of 12 KiB', () => {
    const capped = capMessages(['a'.repeat(5000), 'b'.repeat(5000), 'short']);
    expect(capped.map((m) => m.length)).toEqual([4096, 4096, 5]);
  });
});
