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
 *
 * Unlike upstream v1.20, the running containers come from the pod status
 * cache, not from a ListContainers call: upstream's own TODO(#59998) at that
 * call ("Use kubelet pod cache"). The cache holds what the relist's last
 * lists and inspections saw (at most a relist period old, 1 s); a container
 * started since is checked at the next round. At 1000 pods the call was a
 * list of every container from the runtime every 10 s, decoded in full here.
 *
 * Nor is a container's log path read with a CRI ContainerStatus call when it
 * can be derived: a kubelet creates every container's log at
 * `<podLogsDir>/<ns>_<name>_<uid>/<container>/<restartCount>.log` (sandbox
 * logDirectory + container logPath), and the cached status holds those inputs
 * (from the runtime's labels and restartCount annotation). Only when they are
 * missing or malformed, or the derived file cannot be stat()ed, is
 * ContainerStatus asked (upstream's way, recovery included).
 */
import { createReadStream, createWriteStream, statSync, type Stats } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Pod } from '../../api/pod.js';
import type { CriApi } from '../../cri/client.js';
import type { PodStatusCache } from '../../shared/pod-status-cache.js';
import { buildPodLogsDirectory, containerLogPath } from '../../pod/log-paths.js';
import { errorMessage } from '../../common/error-message.js';

export interface RotateLogsInput {
  maxSizeBytes: number;
  maxFiles: number;
  /** Containers handled at once (containerLogMaxWorkers). */
  workers: number;
  /** ms since the epoch, for the rotated file's name. */
  nowMs: number;
  /** Root of the pod log directories (podLogsDir): log paths are derived under it. */
  podLogsDir: string;
}

export interface RotateLogsResult {
  /** Log paths rotated in this round. */
  rotated: string[];
  errors: string[];
  /** ContainerStatus calls made (containers whose log path could not be derived). */
  statusReads: number;
}

const GZ = '.gz';
const TMP = '.tmp';

/** A running container whose log a round checks: its id and the inputs of its derived log path. */
export interface RotationCandidate {
  id: string;
  podName: string;
  podNamespace: string;
  podUid: string;
  containerName: string;
  restartCount: number;
}

/** The running containers in the pod status cache, pod by pod (slot order). */
export function runningContainers(cache: Pick<PodStatusCache, 'capacity' | 'read'>): RotationCandidate[] {
  const out: RotationCandidate[] = [];
  for (let slot = 0; slot < cache.capacity; slot++) {
    const pod = cache.read(slot);
    if (!pod) continue;
    for (const c of pod.containerStatuses) {
      if (c.state !== 'running') continue;
      out.push({
        id: c.id,
        podName: pod.name,
        podNamespace: pod.namespace,
        podUid: pod.uid,
        containerName: c.name,
        restartCount: c.restartCount,
      });
    }
  }
  return out;
}

/** A value usable as (part of) one path segment: non-empty, no separator or NUL, not `.`/`..`. */
function segment(v: string): boolean {
  return !!v && !v.includes('/') && !v.includes('\0') && v !== '.' && v !== '..';
}

/**
 * The log path a kubelet gave a container (sandbox logDirectory + container
 * logPath), from its pod's name, namespace and uid, its name and restart
 * count; undefined when one of them is missing or malformed.
 */
export function derivedLogPath(podLogsDir: string, c: Omit<RotationCandidate, 'id'>): string | undefined {
  if (!podLogsDir || !segment(c.podName) || !segment(c.podNamespace) || !segment(c.podUid) || !segment(c.containerName)) return undefined;
  if (!Number.isSafeInteger(c.restartCount) || c.restartCount < 0) return undefined;
  const pod: Pod = { metadata: { name: c.podName, namespace: c.podNamespace, uid: c.podUid }, spec: { containers: [] } };
  return posix.join(buildPodLogsDirectory(podLogsDir, pod), containerLogPath(c.containerName, c.restartCount));
}

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
    throw new Error(`failed to reopen container log "${id}": ${errorMessage(err)}`, { cause: err });
  }
}

/**
 * stat() of a derived log path, synchronous: podLogsDir is the kubelet's own
 * local directory, and a round at 1000 pods makes 1000 of these every 10 s,
 * each without the promise API's thread-pool hop. Undefined on any failure.
 */
function statQuietly(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** stat() of `log`; undefined when it does not exist. */
function statIfExists(log: string) {
  return stat(log).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    return undefined;
  });
}

/** One round over `running` (runningContainers of the pod status cache). */
export async function rotateLogs(cri: CriApi, running: readonly RotationCandidate[], input: RotateLogsInput): Promise<RotateLogsResult> {
  const out: RotateLogsResult = { rotated: [], errors: [], statusReads: 0 };
  const queue = [...running];
  /** Upstream: the log path from ContainerStatus; a missing log of a running container is reopened. */
  const fromStatus = async (c: RotationCandidate) => {
    out.statusReads++;
    const log = (await cri.containerStatus({ containerId: c.id })).status?.logPath ?? '';
    if (!log) return undefined;
    let st = await statIfExists(log);
    if (!st) {
      await cri.reopenContainerLog({ containerId: c.id });
      st = await stat(log);
    }
    return { log, st };
  };
  const one = async (c: RotationCandidate) => {
    try {
      const derived = derivedLogPath(input.podLogsDir, c);
      // Any failure to stat the derived path (it does not exist: another podLogsDir, a runtime's own path) → upstream's way.
      const st = derived === undefined ? undefined : statQuietly(derived);
      const found = derived !== undefined && st ? { log: derived, st } : await fromStatus(c);
      if (!found || found.st.size < input.maxSizeBytes) return;
      await rotateOne(cri, c.id, found.log, input);
      out.rotated.push(found.log);
    } catch (err) {
      out.errors.push(`${c.id.slice(0, 12)}: ${errorMessage(err)}`);
    }
  };
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) await one(c);
  };
  await Promise.all(Array.from({ length: Math.max(1, input.workers) }, worker));
  return out;
}
