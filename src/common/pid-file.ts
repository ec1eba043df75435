/**
 * Pid files and process liveness (Linux), shared by the agent and the
 * simulated runtime it embeds:
 * - writePidFile replaces the file atomically (temp file + rename), so a
 *   reader sees the old pid or the new one, never a partial write;
 * - readPidFile gives undefined for a missing file or one that holds no pid;
 * - pidAlive is signal 0: ESRCH is dead, EPERM alive (another user's
 *   process); a zombie (exited, not yet reaped) counts as dead;
 * - processArgv reads /proc/<pid>/cmdline; undefined when it cannot be read
 *   (the process is gone, or /proc hides it).
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

export function writePidFile(path: string, pid: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${pid}\n`);
  renameSync(tmp, path);
}

export function readPidFile(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const t = text.trim();
  return /^[1-9][0-9]{0,9}$/.test(t) ? Number(t) : undefined;
}

/** Removes the pid file if it still names `pid` (another process may have replaced it since). */
export function removePidFile(path: string, pid: number): void {
  if (readPidFile(path) === pid) rmSync(path, { force: true });
}

function isZombie(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

export function processArgv(pid: number): string[] | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
  if (raw === '') return undefined;
  return (raw.endsWith('\0') ? raw.slice(0, -1) : raw).split('\0');
}
