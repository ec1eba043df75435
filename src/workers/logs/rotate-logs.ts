/**
 * The `rotateLogs` pool task (upstream kuberuntime/logs containerLogManager
 * rotateLogs / rotateLog): for every running container whose CRI log file
 * reached containerLogMaxSize:
 *  1. clean up: leftover `.tmp` files, and uncompressed copies of logs that
 *     also exist compressed;
 *  2. keep at most containerLogMaxFiles − 2 rotated files (oldest go first);
 *  3. gzip the rotated files not compressed yet (`<log>.<time>.gz`);
 *  4. rename the log to `<log>.<YYYYMMDD-hhmmss>` and ask the runtime to reopen
 *     it (CRI ReopenContainerLog); if that fails, the rename is undone so the
 *     next round tries again.
 * A missing log file of a running container is reopened (recovers a failed
 * earlier rotation). Errors of one container do not stop the others.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { CriApi } from '../../cri/client.js';
import { ContainerState } from '../../gen/runtime/v1/api.js';

export interface RotateLogsInput {
  maxSizeBytes: number;
  maxFiles: number;
  /** Containers handled at once (containerLogMaxWorkers). */
  workers: number;
  /** ms since the epoch, for the rotated file's name. */
  nowMs: number;
}

export interface RotateLogsResult {
  /** Log paths rotated in this round. */
  rotated: string[];
  errors: string[];
}

const GZ = '.gz';
const TMP = '.tmp';

/** Go's "20060102-150405" in UTC. */
export function rotationSuffix(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** The rotated files of `log` (upstream filepath.Glob(log + ".*")), sorted. */
async function rotatedFiles(log: string): Promise<string[]> {
  const dir = dirname(log);
  const prefix = `${basename(log)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => n.startsWith(prefix))
    .sort()
    .map((n) => join(dir, n));
}

/** Upstream cleanupUnusedLogs + removeExcessLogs: what is left, oldest first. */
export function plan(files: string[], maxFiles: number): { remove: string[]; keep: string[] } {
  const remove: string[] = [];
  const set = new Set(files);
  let keep = files.filter((f) => {
    if (f.endsWith(TMP)) return (remove.push(f), false);
    if (!f.endsWith(GZ) && set.has(f + GZ)) return (remove.push(f), false);
    return true;
  });
  const maxRotated = Math.max(0, maxFiles - 2);
  const excess = keep.length - maxRotated;
  if (excess > 0) {
    remove.push(...keep.slice(0, excess));
    keep = keep.slice(excess);
  }
  return { remove, keep };
}

async function compress(file: string): Promise<void> {
  const tmp = `${file}${GZ}${TMP}`;
  await pipeline(createReadStream(file), createGzip(), createWriteStream(tmp));
  await rename(tmp, file + GZ);
  await rm(file, { force: true });
}

async function rotateOne(cri: CriApi, id: string, log: string, input: RotateLogsInput): Promise<void> {
  const { remove, keep } = plan(await rotatedFiles(log), input.maxFiles);
  for (const f of remove) await rm(f, { force: true });
  for (const f of keep) if (!f.endsWith(GZ)) await compress(f);
  const rotated = `${log}.${rotationSuffix(input.nowMs)}`;
  await rename(log, rotated);
  try {
    await cri.reopenContainerLog({ containerId: id });
  } catch (err) {
    await rename(rotated, log).catch(() => undefined);
    throw new Error(`failed to reopen container log "${id}": ${(err as Error).message}`, { cause: err });
  }
}

export async function rotateLogs(cri: CriApi, input: RotateLogsInput): Promise<RotateLogsResult> {
  const out: RotateLogsResult = { rotated: [], errors: [] };
  const running = await cri.listContainers({ filter: { state: { state: ContainerState.CONTAINER_RUNNING } } });
  const queue = [...running.containers];
  const one = async (c: (typeof queue)[number]) => {
    try {
      const log = (await cri.containerStatus({ containerId: c.id })).status?.logPath ?? '';
      if (!log) return;
      let st = await stat(log).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        return undefined;
      });
      if (!st) {
        await cri.reopenContainerLog({ containerId: c.id });
        st = await stat(log);
      }
      if (st.size < input.maxSizeBytes) return;
      await rotateOne(cri, c.id, log, input);
      out.rotated.push(log);
    } catch (err) {
      out.errors.push(`${c.id.slice(0, 12)}: ${(err as Error).message}`);
    }
  };
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) await one(c);
  };
  await Promise.all(Array.from({ length: Math.max(1, input.workers) }, worker));
  return out;
}
