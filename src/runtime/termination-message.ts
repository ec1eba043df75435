/**
 * A terminated container's message (upstream kuberuntime_container.go
 * getTerminationMessage / readLastStringFromContainerLogs): the file the
 * container wrote at its terminationMessagePath (found through the CRI
 * status's mounts, at most 4 KiB), or, with terminationMessagePolicy
 * FallbackToLogsOnError, a failed container that wrote nothing, the tail of
 * its log (last 80 lines, at most 2 KiB). Reading never fails the inspection:
 * a problem becomes the message, as upstream.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { ContainerState, type ContainerStatus as CriContainerStatus } from '../gen/runtime/v1/api.js';
import { ANNOTATION_TERMINATION_MESSAGE_PATH, ANNOTATION_TERMINATION_MESSAGE_POLICY } from './types.js';
import { errorMessage } from '../common/error-message.js';

/** upstream kubecontainer.MaxContainerTerminationMessageLength. */
export const MAX_CONTAINER_MESSAGE_BYTES = 4 * 1024;
/** upstream MaxContainerTerminationMessageLogLength / ...LogLines. */
export const MAX_LOG_MESSAGE_BYTES = 2 * 1024;
export const MAX_LOG_MESSAGE_LINES = 80;
/** upstream MaxPodTerminationMessageLogLength: what all of a pod's messages may take together. */
export const MAX_POD_MESSAGE_BYTES = 12 * 1024;
/** How much of the end of a log file is read to find its last lines. */
const LOG_TAIL_READ_BYTES = 256 * 1024;

async function readTail(path: string, limit: number): Promise<Buffer> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    const { size } = await fh.stat();
    const length = Math.min(size, limit);
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, size - length);
    return buf;
  } finally {
    await fh?.close();
  }
}

/** upstream tail.ReadAtMost: the last `limit` bytes of the file. */
async function readAtMost(path: string, limit: number): Promise<string> {
  return (await readTail(path, limit)).toString('utf8');
}

/**
 * The content of the last `lines` CRI log lines (`<time> <stream> <F|P> <text>`),
 * keeping the last `bytes` bytes (upstream ReadLogs with TailLines into a circular buffer).
 */
export async function lastLogMessage(logPath: string, lines = MAX_LOG_MESSAGE_LINES, bytes = MAX_LOG_MESSAGE_BYTES): Promise<string> {
  const text = (await readTail(logPath, LOG_TAIL_READ_BYTES)).toString('utf8');
  const all = text.split('\n').filter((l) => l !== '');
  let out = '';
  for (const line of all.slice(-lines)) {
    const m = /^\S+ (?:stdout|stderr) ([FP])(?: (.*))?$/.exec(line);
    if (!m) continue;
    out += (m[2] ?? '') + (m[1] === 'F' ? '\n' : '');
  }
  const buf = Buffer.from(out, 'utf8');
  return buf.length > bytes ? buf.subarray(buf.length - bytes).toString('utf8') : out;
}

/** The message to append to an exited container's status message ('' for none). */
export async function terminationMessage(status: CriContainerStatus): Promise<string> {
  if (status.state !== ContainerState.CONTAINER_EXITED) return '';
  const path = status.annotations[ANNOTATION_TERMINATION_MESSAGE_PATH] ?? '';
  const fallbackToLogs =
    status.annotations[ANNOTATION_TERMINATION_MESSAGE_POLICY] === 'FallbackToLogsOnError' &&
    status.exitCode !== 0 &&
    status.reason !== 'ContainerCannotRun';
  let checkLogs = fallbackToLogs;
  let message = '';
  const mount = path ? status.mounts.find((m) => m.containerPath === path) : undefined;
  if (mount) {
    try {
      message = await readAtMost(mount.hostPath, MAX_CONTAINER_MESSAGE_BYTES);
      checkLogs = fallbackToLogs && message.length === 0;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        return `Error on reading termination log ${mount.hostPath}: ${errorMessage(err)}`;
    }
  }
  if (!checkLogs) return message;
  try {
    return await lastLogMessage(status.logPath);
  } catch (err) {
    return `Error on reading termination message from logs: ${errorMessage(err)}`;
  }
}

/** Upstream normalizeStatus's cap: each message gets an equal share of the pod's 12 KiB. */
export function capMessages(messages: string[]): string[] {
  const share = Math.floor(MAX_POD_MESSAGE_BYTES / Math.max(1, messages.length));
  return messages.map((m) => {
    const b = Buffer.from(m, 'utf8');
    return b.length > share ? b.subarray(0, share).toString('utf8') : m;
  });
}
