/**
 * fsGroup ownership of a pod's managed volumes (upstream pkg/volume
 * volume_linux.go SetVolumeOwnership): every file and directory of the volume
 * gets the pod's fsGroup as its group and the group bits it needs (rw, or r
 * for read-only volumes; directories also x and setgid, so new files inherit
 * the group). Symlinks are re-grouped but never chmod-ed (that would change
 * their target). With fsGroupChangePolicy OnRootMismatch nothing is walked
 * when the volume's root already matches.
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../../api/pod.js';

const RW_MASK = 0o660;
const RO_MASK = 0o440;
const EXEC_MASK = 0o110;
const SETGID = 0o2000;

/** The pod's fsGroup and change policy (pod.spec.securityContext). */
export function fsGroupOf(pod: Pod): { fsGroup?: number; policy?: string } {
  const sc = pod.spec.securityContext;
  return { fsGroup: sc?.fsGroup, policy: sc?.fsGroupChangePolicy };
}

function wanted(mode: number, isDir: boolean, readOnly: boolean): number {
  let mask = readOnly ? RO_MASK : RW_MASK;
  if (isDir) mask |= SETGID | EXEC_MASK;
  return (mode & 0o7777) | mask;
}

async function rootMatches(dir: string, fsGroup: number, readOnly: boolean): Promise<boolean> {
  const st = await lstat(dir);
  return st.gid === fsGroup && (st.mode & 0o7777) === wanted(st.mode, true, readOnly);
}

async function change(path: string, fsGroup: number, readOnly: boolean): Promise<void> {
  const st = await lstat(path);
  await lchown(path, -1, fsGroup);
  if (st.isSymbolicLink()) return;
  const mode = wanted(st.mode, st.isDirectory(), readOnly);
  if (mode !== (st.mode & 0o7777)) await chmod(path, mode);
  if (st.isDirectory()) for (const name of await readdir(path)) await change(join(path, name), fsGroup, readOnly);
}

/** Applies `pod`'s fsGroup to the volume at `dir` (no-op without an fsGroup). */
export async function setVolumeOwnership(dir: string, pod: Pod, readOnly: boolean): Promise<void> {
  const { fsGroup, policy } = fsGroupOf(pod);
  if (fsGroup === undefined || fsGroup === null) return;
  if (policy === 'OnRootMismatch' && (await rootMatches(dir, fsGroup, readOnly))) return;
  await change(dir, fsGroup, readOnly);
}
