import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/common/clock.js';
import { readLogs } from '../../src/main/logs/read-logs.js';
import type { LogReadOptions } from '../../src/main/logs/cri-log.js';
import { criLogLines } from '../helpers/log-load.js';
import { waitFor } from '../helpers/wait-for.js';

const READ_CHUNK = 64 * 1024;
const all: LogReadOptions = { tail: -1, bytes: -1, sinceNs: 0n, follow: false, timestamps: false };

describe('readLogs: output in batches of one read each', () => {
  let dir: string;
  let file: string;
  let size: number;
  const LINES = 300_000;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kts-read-logs-'));
    file = join(dir, '0.log');
    const text = criLogLines(LINES, Date.UTC(2026, 10, 27));
    size = Buffer.byteLength(text);
    writeFileSync(file, text);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const read = async (options: LogReadOptions) => {
    const writes: number[] = [];
    const chunks: Buffer[] = [];
    await readLogs({
      path: file,
      options,
      clock: realClock,
      isRunning: async () => false,
      write: async (b) => {
        writes.push(b.length);
        chunks.push(b);
      },
    });
    return { writes, text: Buffer.concat(chunks).toString() };
  };

  it('a 300,000-line log: one write per read chunk, not one per line, and every line', async () => {
    const { writes, text } = await read(all);
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(size / READ_CHUNK) + 1);
    expect(text.length).toBe(LINES * 'xxxxxxxxxxxxxxxxxxxx\n'.length);
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .every((l) => l === 'xxxxxxxxxxxxxxxxxxxx'),
    ).toBe(true);
  });

  it('limitBytes ends mid-batch and mid-line', async () => {
    const { writes, text } = await read({ ...all, bytes: 100_000 });
    expect(text.length).toBe(100_000);
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(100_000 / 21 / (READ_CHUNK / 60)) + 2);
  });

  it('tail with timestamps: the last lines, each with its timestamp', async () => {
    const { text } = await read({ ...all, tail: 3, timestamps: true });
    const lines = text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l).toMatch(/^2026-11-27T00:00:00\.\d{9}Z xxxxxxxxxxxxxxxxxxxx$/);
  });
});

describe('readLogs follow across a rotation', () => {
  it('moves to the file the path names after a rotation it had no event for, after reading the old one to its end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-read-logs-rot-'));
    const file = join(dir, '0.log');
    const line = (s: string) => `2026-11-27T00:00:00.000000000Z stdout F ${s}\n`;
    writeFileSync(file, line('a'));
    let running = true;
    // isRunning is asked at each end of the file; holding it keeps the reader away from its watcher.
    let held: (() => void) | undefined;
    let hold = false;
    let text = '';
    const done = readLogs({
      path: file,
      options: { ...all, follow: true },
      clock: realClock,
      isRunning: () =>
        new Promise<boolean>((resolve) => {
          if (!hold) return resolve(running);
          held = () => resolve(running);
        }),
      write: async (b) => {
        text += b.toString();
      },
    });
    try {
      await waitFor(() => text === 'a\n', { what: 'the first line' });
      hold = true;
      await waitFor(() => held, { what: 'the reader at the end of the file' });
      // The rotation as the container log manager does it, while the reader is not watching: rename, a last
      // write to the old file, then the new file.
      renameSync(file, `${file}.1`);
      appendFileSync(`${file}.1`, line('b'));
      writeFileSync(file, line('c'));
      hold = false;
      held!();
      await waitFor(() => text === 'a\nb\nc\n', { what: 'the old file to its end, then the new one', timeoutMs: 10_000 });
      appendFileSync(file, line('d'));
      await waitFor(() => text === 'a\nb\nc\nd\n', { what: 'a line written to the new file', timeoutMs: 10_000 });
    } finally {
      running = false;
      hold = false;
      held?.();
      appendFileSync(file, line('e'));
      await done;
      rmSync(dir, { recursive: true, force: true });
    }
    expect(text).toBe('a\nb\nc\nd\ne\n');
  });
});
