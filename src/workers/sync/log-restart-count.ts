/**
 * The restart count of a container the runtime no longer knows (upstream
 * kuberuntime_container.go calcRestartCountByLogDir): when a runtime lost its
 * state (a node reboot with containerd's state on tmpfs), the container's log
 * directory still holds `<restartCount>.log` files, so the next instance
 * continues at the highest number + 1 instead of writing over 0.log.
 *
 * Contract: never throws; a missing directory is 0, an unreadable one is 0
 * and reported through `onError`.
 */
import { readdirSync, type Dirent } from 'node:fs';
import { posix as path } from 'node:path';

const LOG_FILE = /^(\d+)\.log(\..*)?/;

/** `<podLogsDirectory>/<container>`: upstream BuildContainerLogsDirectory. */
export function containerLogsDirectory(podLogsDirectory: string, containerName: string): string {
  return path.join(podLogsDirectory, containerName);
}

/** The highest `<n>.log` (or rotated `<n>.log.*`) in `dir`, plus one; 0 when there is none. */
export function restartCountFromLogDir(
  dir: string,
  readdir: (dir: string) => Dirent[] = (d) => readdirSync(d, { withFileTypes: true }),
  onError?: (err: unknown) => void,
): number {
  let entries: Dirent[];
  try {
    entries = readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError?.(err);
    return 0;
  }
  let count = 0;
  for (const e of entries) {
    if (e.isDirectory()) continue;
    const m = LOG_FILE.exec(e.name);
    if (!m) continue;
    const n = Number(m[1]);
    if (Number.isSafeInteger(n) && n + 1 > count) count = n + 1;
  }
  return count;
}
