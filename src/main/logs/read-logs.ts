/**
 * Reading a container's CRI log file for /containerLogs (upstream
 * kuberuntime/logs ReadLogs).
 *
 * - tail: starts at the n-th last line of the file (an unterminated last
 *   line does not count); without follow it then stops after n lines.
 * - since: lines older than it are skipped; timestamps: each logical line
 *   (not each partial piece) starts with its RFC3339Nano timestamp and a space.
 * - bytes: output stops at the limit, mid-line if need be.
 * - follow: at the end of the file it waits for the file to change (fs.watch,
 *   or a check every second), and moves to the file the path names when that
 *   is no longer the one it reads (the log was rotated: renamed, then
 *   recreated, possibly a while later), after reading the old one to its end;
 *   it ends once the container is no longer running and everything written
 *   has been read; also when `signal` aborts.
 * Malformed lines are skipped. Only I/O; runs on the main thread, so its cost
 * per step is bounded: it reads READ_CHUNK bytes, parses the lines in them
 * and hands their output to `write` in one call (back-pressure then holds the
 * next read), whatever the length of the file.
 */
import { watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Clock } from '../../common/clock.js';
import { parseCriLogLine, type LogReadOptions } from './cri-log.js';
import { errorMessage } from '../../common/error-message.js';

const BLOCK = 4096;
const READ_CHUNK = 64 * 1024;
const FORCE_CHECK_MS = 1000;
const NL = 0x0a;

/** Upstream tail.FindTailLineStartIndex. */
export async function findTailLineStart(fh: FileHandle, n: number): Promise<number> {
  if (n < 0) return 0;
  const size = (await fh.stat()).size;
  let left = 0;
  let count = 0;
  let buf = Buffer.alloc(0);
  for (let right = size; right > 0 && count <= n; right -= BLOCK) {
    left = Math.max(0, right - BLOCK);
    buf = Buffer.alloc(right - left);
    await fh.read(buf, 0, buf.length, left);
    for (let i = buf.indexOf(NL); i >= 0; i = buf.indexOf(NL, i + 1)) count++;
  }
  for (; count > n; count--) {
    const idx = buf.indexOf(NL) + 1;
    buf = buf.subarray(idx);
    left += idx;
  }
  return left;
}

export interface ReadLogsOptions {
  path: string;
  options: LogReadOptions;
  /** Receives output; resolves when it may continue (back-pressure). */
  write(chunk: Buffer): Promise<void>;
  /** Whether the container still runs (follow mode asks at each end of file). */
  isRunning(): Promise<boolean>;
  clock: Clock;
  signal?: AbortSignal;
  /** Called for each skipped malformed line. */
  onBadLine?(line: string, reason: string): void;
}

class Stop extends Error {}

/** Whether `path` no longer names the file open as `fh` (it was renamed away, and maybe recreated). */
async function replaced(fh: FileHandle, path: string): Promise<boolean> {
  const [open, named] = await Promise.all([fh.stat(), stat(path).catch(() => undefined)]);
  return named !== undefined && (named.ino !== open.ino || named.dev !== open.dev);
}

/** Waits for a change of `file` in its directory, at most FORCE_CHECK_MS. */
function waitForChange(watcher: FSWatcher, file: string, clock: Clock, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let cancel = () => {};
    const done = () => {
      cancel();
      watcher.off('change', onChange);
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    const onChange = (_event: string, name: string | Buffer | null) => {
      if (name !== null && String(name) !== file) return;
      done();
    };
    const onAbort = () => done();
    cancel = clock.setTimer(FORCE_CHECK_MS, done);
    watcher.on('change', onChange);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export async function readLogs(read: ReadLogsOptions): Promise<void> {
  const opts = read.options;
  let fh = await open(read.path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new Error(`failed to open log file "${read.path}": ${err.message}`);
  });
  let watcher: FSWatcher | undefined;
  let pos = await findTailLineStart(fh, opts.tail);
  const limited = opts.tail >= 0 && !opts.follow;
  let limitedNum = opts.tail;
  let remain = opts.bytes < 0 ? Number.POSITIVE_INFINITY : opts.bytes;
  let isNewLine = true;
  let found = true;
  let drained = false;
  let pending = Buffer.alloc(0);
  const chunk = Buffer.alloc(READ_CHUNK);
  /** Output of the lines parsed since the last flush. */
  let out: Buffer[] = [];
  let outBytes = 0;

  const flush = async () => {
    if (outBytes === 0) return;
    const batch = out.length === 1 ? out[0] : Buffer.concat(out, outBytes);
    out = [];
    outBytes = 0;
    await read.write(batch);
  };

  /** Adds one line's output to the batch; false once the byte limit is reached. */
  const emit = (raw: Buffer): boolean => {
    let line;
    try {
      line = parseCriLogLine(raw);
    } catch (err) {
      read.onBadLine?.(raw.toString(), errorMessage(err));
      return true;
    }
    if (line.timeNs >= opts.sinceNs) {
      if (opts.timestamps && isNewLine) push(Buffer.from(`${line.timestamp} `));
      push(line.content);
      if (remain <= 0) return false;
    }
    if (limited) limitedNum--;
    isNewLine = line.content.length === 0 || line.content[line.content.length - 1] === NL;
    return true;
  };
  const push = (b: Buffer) => {
    if (b.length > remain) b = b.subarray(0, remain);
    if (b.length === 0) return;
    out.push(b); // a view of `pending`, which each read replaces rather than overwrites
    outBytes += b.length;
    remain -= b.length;
  };

  /** Returns at the end (or throws Stop at the byte limit) with the last lines' output still in the batch. */
  const pump = async (): Promise<void> => {
    for (;;) {
      if (read.signal?.aborted || (limited && limitedNum === 0)) return;
      const { bytesRead } = await fh.read(chunk, 0, READ_CHUNK, pos);
      if (bytesRead > 0) {
        pos += bytesRead;
        pending = pending.length ? Buffer.concat([pending, chunk.subarray(0, bytesRead)]) : Buffer.from(chunk.subarray(0, bytesRead));
        let start = 0;
        for (let nl = pending.indexOf(NL); nl >= 0; nl = pending.indexOf(NL, start)) {
          const more = emit(pending.subarray(start, nl + 1));
          start = nl + 1;
          if (!more) throw new Stop();
          if (limited && limitedNum === 0) return;
        }
        pending = pending.subarray(start);
        await flush();
        continue;
      }
      // End of file.
      if (!opts.follow) {
        if (pending.length > 0) emit(pending); // an incomplete last line, as upstream
        return;
      }
      if (!found) return; // the container stopped and everything it wrote was read
      if (!watcher) {
        watcher = watch(dirname(read.path));
        watcher.on('error', () => undefined);
        continue; // read once more: a write may have come before the watcher
      }
      // At the end of the file: if the path now names another file (rotated), read the old one to its end once
      // more (the writer moved to the new one before it existed under the path), then the new one from its start.
      if (await replaced(fh, read.path)) {
        if (!drained) {
          drained = true;
          continue;
        }
        drained = false;
        const next = await open(read.path, 'r').catch(() => undefined);
        if (next) {
          await fh.close();
          fh = next;
          pos = 0;
          pending = Buffer.alloc(0);
          continue;
        }
      }
      found = await read.isRunning();
      if (!found) continue;
      await waitForChange(watcher, basename(read.path), read.clock, read.signal);
    }
  };

  try {
    await pump().catch((err: unknown) => {
      if (!(err instanceof Stop)) throw err;
    });
    if (!read.signal?.aborted) await flush();
  } finally {
    watcher?.close();
    await fh.close();
  }
}
