/**
 * In-memory CgroupManager: cgroups by cgroupfs name with the resources last
 * written, and the pids tests put in them. destroy fails with EBUSY-like
 * errors while pids remain (as the kernel's rmdir does).
 */
import type { CgroupManager, ResourceConfig } from '../../src/main/cgroups/cgroup-manager.js';
import { toCgroupfs, type CgroupName } from '../../src/main/cgroups/cgroup-name.js';

export class FakeCgroupManager implements CgroupManager {
  readonly version = 1 as const;
  /** cgroupfs name → resources written so far (merged). */
  readonly cgroups = new Map<string, ResourceConfig>();
  /** cgroupfs name → pids in it. */
  readonly procs = new Map<string, number[]>();
  readonly calls: string[] = [];
  /** Names whose create fails. */
  readonly failCreate = new Set<string>();

  name(name: CgroupName): string {
    return toCgroupfs(name);
  }

  exists(name: CgroupName): Promise<boolean> {
    return Promise.resolve(this.cgroups.has(toCgroupfs(name)));
  }

  create(name: CgroupName, resources: ResourceConfig): Promise<void> {
    const key = toCgroupfs(name);
    this.calls.push(`create ${key}`);
    if (this.failCreate.has(key)) return Promise.reject(new Error(`cannot create ${key}`));
    for (let i = 1; i <= name.length; i++) {
      const parent = toCgroupfs(name.slice(0, i));
      if (!this.cgroups.has(parent)) this.cgroups.set(parent, {});
    }
    this.cgroups.set(key, { ...this.cgroups.get(key), ...resources });
    return Promise.resolve();
  }

  update(name: CgroupName, resources: ResourceConfig): Promise<void> {
    const key = toCgroupfs(name);
    this.calls.push(`update ${key}`);
    const cur = this.cgroups.get(key);
    if (!cur) return Promise.reject(new Error(`no cgroup ${key}`));
    this.cgroups.set(key, { ...cur, ...resources });
    return Promise.resolve();
  }

  destroy(name: CgroupName): Promise<void> {
    const key = toCgroupfs(name);
    this.calls.push(`destroy ${key}`);
    const under = [...this.cgroups.keys()].filter((k) => k === key || k.startsWith(key + '/'));
    if (under.some((k) => (this.procs.get(k) ?? []).length > 0)) return Promise.reject(new Error(`EBUSY: ${key} has processes`));
    for (const k of under) this.cgroups.delete(k);
    return Promise.resolve();
  }

  pids(name: CgroupName): Promise<number[]> {
    const key = toCgroupfs(name);
    return Promise.resolve([...this.procs].filter(([k]) => k === key || k.startsWith(key + '/')).flatMap(([, p]) => p));
  }

  children(name: CgroupName): Promise<string[]> {
    const prefix = name.length === 0 ? '/' : toCgroupfs(name) + '/';
    const out = new Set<string>();
    for (const k of this.cgroups.keys()) {
      if (k.startsWith(prefix) && k.length > prefix.length) out.add(k.slice(prefix.length).split('/')[0]);
    }
    return Promise.resolve([...out]);
  }
}
