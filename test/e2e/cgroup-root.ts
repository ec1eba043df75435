/**
 * A cgroupRoot of its own for each agent the tests start on a real runtime.
 *
 * cgroupsPerQOS is true by default (as upstream), and housekeeping removes
 * every pod cgroup under `<cgroupRoot>/kubepods` whose pod it does not run:
 * agents sharing one cgroupRoot on a machine would remove each other's. So
 * each agent gets `/kts-e2e-<test pid>-<id>`, made in every hierarchy before
 * it starts (upstream requires cgroupRoot to exist) and removed, with all
 * below it, after. A root left by a test process that died (its pid is gone)
 * and holding no process is removed by the next harness that starts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const CGROUP_FS = '/sys/fs/cgroup';
const STALE_ROOT = /^kts-e2e-(\d+)-[0-9a-z]+$/;

/** Every hierarchy directory, the named systemd one and a hybrid host's v2 mount included (cgroup v2 hosts: the root). */
export function cgroupHierarchies(): string[] {
  if (existsSync(join(CGROUP_FS, 'cgroup.controllers'))) return [CGROUP_FS];
  if (!existsSync(CGROUP_FS)) return [];
  return readdirSync(CGROUP_FS)
    .map((e) => join(CGROUP_FS, e))
    .filter((d) => statSync(d).isDirectory());
}

/** `rel` (a cgroupfs path) exists in some hierarchy. */
export function cgroupExists(rel: string): boolean {
  return cgroupHierarchies().some((h) => existsSync(join(h, rel)));
}

/** Makes `rel` in every hierarchy (existing directories are kept). */
export function createCgroupRoot(rel: string): void {
  for (const h of cgroupHierarchies()) mkdirSync(join(h, rel), { recursive: true });
}

function procs(dir: string): number[] {
  const text = readFileSync(join(dir, 'cgroup.procs'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((p) => Number(p));
}

/** Kills what is left under `rel` and removes its cgroups bottom-up in every hierarchy. */
export function removeCgroupTree(rel: string): void {
  for (const h of cgroupHierarchies()) {
    const walk = (dir: string): void => {
      if (!existsSync(dir)) return;
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
      for (let i = 0; ; i++) {
        for (const pid of procs(dir)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        try {
          rmdirSync(dir);
          return;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') return;
          if (code !== 'EBUSY' || i === 49) throw err;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
        }
      }
    };
    walk(join(h, rel));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Any process in `rel` or below, in any hierarchy. */
function busy(rel: string): boolean {
  for (const h of cgroupHierarchies()) {
    const walk = (dir: string): boolean =>
      existsSync(dir) &&
      (procs(dir).length > 0 || readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory() && walk(join(dir, e.name))));
    if (walk(join(h, rel))) return true;
  }
  return false;
}

/** Removes the roots of test processes that died without removing theirs, when nothing runs in them. */
export function removeStaleCgroupRoots(): void {
  const names = new Set(cgroupHierarchies().flatMap((h) => readdirSync(h).filter((e) => STALE_ROOT.test(e))));
  for (const name of names) {
    const pid = Number(STALE_ROOT.exec(name)![1]);
    if (alive(pid) || busy(`/${name}`)) continue;
    try {
      removeCgroupTree(`/${name}`);
    } catch {
      // another harness is removing it too, or a process arrived: leave it for the next one
    }
  }
}

let next = 0;

/** A new cgroupRoot name for an agent of this test process (not yet made). */
export function newCgroupRootName(): string {
  return `/kts-e2e-${process.pid}-${(next++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
