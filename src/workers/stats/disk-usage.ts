/**
 * The `diskUsage` pool task: bytes and inodes under each path, as upstream's
 * `du -x -s -B 1` and `find -xdev | wc -l` (fsquota/du in volume metrics):
 * allocated blocks (st_blocks × 512) of every entry, the path itself
 * included, not crossing into other file systems, not following symlinks.
 * Disk walks never run on the main thread (inline mode aside). A path that
 * does not exist reports nothing; an entry that vanishes mid-walk is skipped.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiskUsage } from '../protocol/stats-wire.js';

async function walk(path: string, dev: number, acc: { bytes: bigint; inodes: bigint }): Promise<void> {
  let st;
  try {
    st = await lstat(path, { bigint: true });
  } catch {
    return;
  }
  if (Number(st.dev) !== dev) return;
  acc.bytes += st.blocks * 512n;
  acc.inodes += 1n;
  if (!st.isDirectory()) return;
  let names: string[];
  try {
    names = await readdir(path);
  } catch {
    return;
  }
  for (const name of names) await walk(join(path, name), dev, acc);
}

export async function diskUsage(paths: readonly string[]): Promise<DiskUsage[]> {
  const out: DiskUsage[] = [];
  for (const path of paths) {
    let dev: number;
    try {
      dev = Number((await lstat(path, { bigint: true })).dev);
    } catch {
      continue;
    }
    const acc = { bytes: 0n, inodes: 0n };
    await walk(path, dev, acc);
    out.push({ path, usedBytes: acc.bytes, inodesUsed: acc.inodes });
  }
  return out;
}
