/**
 * CgroupManager over the cgroup filesystem (upstream cgroup_manager_linux.go
 * with libcontainer's fs and fs2 managers).
 *
 * The driver decides the on-disk names: cgroupfs keeps a name's components
 * (`kubepods/burstable/pod<uid>`); systemd expands them into nested slices
 * (`kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice`,
 * dashes in a component as '_'), the layout upstream v1.20's systemd driver
 * leaves on disk. Either way this manager writes the directories and files
 * itself: it asks systemd for nothing (upstream creates the slices as
 * transient units over D-Bus, so systemd owns them; here it does not).
 *
 * v1: the cgroup is a directory in every mounted hierarchy (as libcontainer
 * creates it); resources go to cpu.shares, cpu.cfs_period_us,
 * cpu.cfs_quota_us, memory.limit_in_bytes and pids.max. A new cpuset
 * directory gets its parent's cpuset.cpus/mems (the kernel leaves them empty).
 * runc also makes container cgroups in the named systemd hierarchy and, on a
 * hybrid host, the v2 mount: destroy, pids and children cover those too.
 * v2: one directory; each ancestor's cgroup.subtree_control enables the
 * controllers first; resources go to cpu.weight (from shares, upstream's
 * ConvertCPUSharesToCgroupV2Value), cpu.max, memory.max and pids.max.
 *
 * Only the main thread uses it (async fs; nothing blocks the loop).
 */
import { mkdir, readdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock } from '../../common/clock.js';
import { KubeletTsError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { CgroupDriver } from '../config/kubelet-config.js';
import { driverName, toSystemd, type CgroupName } from './cgroup-name.js';
import type { CgroupLayout } from './cgroup-controllers.js';
import type { CgroupManager, ResourceConfig } from './cgroup-manager.js';

/** A cgroup file write or directory removal failed. */
export class CgroupWriteError extends KubeletTsError {
  override readonly code = 'KTS_ERR_CGROUP_WRITE';
}

export interface FsCgroupManagerOptions {
  layout: CgroupLayout;
  /** How names map to directories (default cgroupfs). */
  driver?: CgroupDriver;
  clock?: Clock;
  /**
   * Removes one empty cgroup directory (default: rmdir). A cgroup directory
   * holds only kernel files, which go with it; tests over a tmp tree pass one
   * that removes the regular files first.
   */
  rmdir?: (path: string) => Promise<void>;
}

/** Controllers whose directory must exist for a cgroup to count as existing (upstream Exists' list, when mounted). */
const EXISTS_CONTROLLERS = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'hugetlb'];
/** v2 controllers enabled for children, as upstream enableAllControllers (those the root offers). */
const V2_SUBTREE_CONTROLLERS = ['cpu', 'cpuset', 'memory', 'hugetlb', 'pids', 'io'];
const DEFAULT_PERIOD_US = 100_000;
const SLICE = '.slice';
const DESTROY_ATTEMPTS = 5;
const DESTROY_RETRY_MS = 100;

/** Upstream ConvertCPUSharesToCgroupV2Value: shares [2, 262144] → weight [1, 10000]; 0 stays 0 (unset). */
export function cpuSharesToWeight(shares: number): number {
  if (shares === 0) return 0;
  return 1 + Math.trunc(((shares - 2) * 9999) / 262142);
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

export class FsCgroupManager implements CgroupManager {
  readonly version: 1 | 2;
  private readonly clock: Clock;
  private readonly removeDir: (path: string) => Promise<void>;

  private readonly driver: CgroupDriver;

  constructor(private readonly options: Readonly<FsCgroupManagerOptions>) {
    this.version = options.layout.version;
    this.driver = options.driver ?? 'cgroupfs';
    this.clock = options.clock ?? realClock;
    this.removeDir = options.rmdir ?? ((p) => rmdir(p));
  }

  name(name: CgroupName): string {
    return driverName(this.driver, name);
  }

  /** The directories of a name below a hierarchy's root, by driver. */
  private path(name: CgroupName): string[] {
    return this.driver === 'systemd'
      ? toSystemd(name)
          .split('/')
          .filter((c) => c !== '')
      : [...name];
  }

  /** The cgroup's directory in the hierarchy of `controller` (undefined when not mounted). */
  private dir(controller: string, name: CgroupName): string | undefined {
    const root = this.options.layout.controllers.get(controller);
    return root === undefined ? undefined : join(root, ...this.path(name));
  }

  /**
   * A child directory as a name component: itself (cgroupfs); for systemd, the last dash-separated part
   * of a slice with '_' back to '-' (upstream ParseSystemdToCgroupName); undefined when not a slice.
   */
  private component(dirName: string): string | undefined {
    if (this.driver !== 'systemd') return dirName;
    if (!dirName.endsWith(SLICE)) return undefined;
    const base = dirName.slice(0, -SLICE.length);
    return base.slice(base.lastIndexOf('-') + 1).replaceAll('_', '-');
  }

  async exists(name: CgroupName): Promise<boolean> {
    const dirs = EXISTS_CONTROLLERS.map((c) => this.dir(c, name)).filter((d): d is string => d !== undefined);
    for (const d of new Set(dirs)) {
      const st = await stat(d).catch(() => undefined);
      if (!st?.isDirectory()) return false;
    }
    return dirs.length > 0;
  }

  async create(name: CgroupName, resources: ResourceConfig): Promise<void> {
    const path = this.path(name);
    if (this.version === 2) {
      await this.enableSubtreeControllers(path);
      await mkdir(join(this.options.layout.hierarchies[0], ...path), { recursive: true });
    } else {
      for (const h of this.options.layout.hierarchies) await mkdir(join(h, ...path), { recursive: true });
      await this.inheritCpuset(path);
    }
    await this.update(name, resources);
  }

  async update(name: CgroupName, r: ResourceConfig): Promise<void> {
    if (this.version === 2) return this.updateV2(name, r);
    if (r.cpuShares !== undefined) await this.write('cpu', name, 'cpu.shares', r.cpuShares);
    // The period first: a quota is checked against it.
    if (r.cpuPeriod !== undefined) await this.write('cpu', name, 'cpu.cfs_period_us', r.cpuPeriod);
    if (r.cpuQuota !== undefined) await this.write('cpu', name, 'cpu.cfs_quota_us', r.cpuQuota > 0 ? r.cpuQuota : -1);
    if (r.memoryLimitBytes !== undefined)
      await this.write('memory', name, 'memory.limit_in_bytes', r.memoryLimitBytes > 0 ? r.memoryLimitBytes : -1);
    if (r.pidsLimit !== undefined) await this.write('pids', name, 'pids.max', r.pidsLimit > 0 ? r.pidsLimit : 'max');
  }

  private async updateV2(name: CgroupName, r: ResourceConfig): Promise<void> {
    if (r.cpuShares !== undefined && r.cpuShares !== 0) await this.write('cpu', name, 'cpu.weight', cpuSharesToWeight(r.cpuShares));
    if (r.cpuQuota !== undefined || r.cpuPeriod !== undefined) {
      const quota = r.cpuQuota !== undefined && r.cpuQuota > 0 ? String(r.cpuQuota) : 'max';
      await this.write('cpu', name, 'cpu.max', `${quota} ${r.cpuPeriod || DEFAULT_PERIOD_US}`);
    }
    if (r.memoryLimitBytes !== undefined)
      await this.write('memory', name, 'memory.max', r.memoryLimitBytes > 0 ? r.memoryLimitBytes : 'max');
    if (r.pidsLimit !== undefined) await this.write('pids', name, 'pids.max', r.pidsLimit > 0 ? r.pidsLimit : 'max');
  }

  private async write(controller: string, name: CgroupName, file: string, value: number | string): Promise<void> {
    const dir = this.dir(controller, name);
    if (dir === undefined) {
      throw new CgroupWriteError(`cannot set ${file} of ${this.name(name)}: the ${controller} cgroup controller is not available`);
    }
    try {
      await writeFile(join(dir, file), String(value));
    } catch (err) {
      throw new CgroupWriteError(`cannot write ${value} to ${join(dir, file)}: ${errorMessage(err)}`, { cause: err });
    }
  }

  /** v2: every ancestor of `path` (directories) enables the controllers the root offers for its children. */
  private async enableSubtreeControllers(path: string[]): Promise<void> {
    const root = this.options.layout.hierarchies[0];
    const line = V2_SUBTREE_CONTROLLERS.filter((c) => this.options.layout.controllers.has(c))
      .map((c) => `+${c}`)
      .join(' ');
    if (!line) return;
    for (let i = 0; i < path.length; i++) {
      const dir = join(root, ...path.slice(0, i));
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'cgroup.subtree_control'), line).catch((err: unknown) => {
        throw new CgroupWriteError(`cannot enable controllers (${line}) in ${dir}: ${errorMessage(err)}`, { cause: err });
      });
    }
  }

  /** v1 cpuset: a directory of `path` whose cpus or mems are empty takes its parent's (libcontainer's cpuset Apply). */
  private async inheritCpuset(path: string[]): Promise<void> {
    const root = this.options.layout.controllers.get('cpuset');
    if (root === undefined) return;
    for (let i = 1; i <= path.length; i++) {
      const parent = join(root, ...path.slice(0, i - 1));
      const dir = join(root, ...path.slice(0, i));
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        const own = await readFile(join(dir, file), 'utf8').catch(() => '');
        if (own.trim() !== '') continue;
        const inherited = (await readFile(join(parent, file), 'utf8').catch(() => '')).trim();
        if (inherited !== '') await writeFile(join(dir, file), inherited);
      }
    }
  }

  /** The controller hierarchies and those the runtime also uses (named systemd, hybrid unified). */
  private everyHierarchy(): string[] {
    return [...this.options.layout.hierarchies, ...this.options.layout.extra];
  }

  async destroy(name: CgroupName): Promise<void> {
    if (name.length === 0) throw new CgroupWriteError('refusing to remove the root cgroup');
    for (const h of this.everyHierarchy()) await this.removeTree(join(h, ...this.path(name)));
  }

  /** Removes a cgroup directory bottom-up; EBUSY (processes still exiting) is retried a few times. */
  private async removeTree(dir: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (errno(err) === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) if (e.isDirectory()) await this.removeTree(join(dir, e.name));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.removeDir(dir);
        return;
      } catch (err) {
        if (errno(err) === 'ENOENT') return;
        if (errno(err) !== 'EBUSY' || attempt >= DESTROY_ATTEMPTS) {
          throw new CgroupWriteError(`cannot remove cgroup ${dir}: ${errorMessage(err)}`, { cause: err });
        }
        await this.clock.sleep(DESTROY_RETRY_MS * attempt);
      }
    }
  }

  async pids(name: CgroupName): Promise<number[]> {
    const out = new Set<number>();
    const walk = async (dir: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        if (e.isDirectory()) await walk(join(dir, e.name));
        else if (e.name === 'cgroup.procs') {
          const text = await readFile(join(dir, e.name), 'utf8').catch(() => '');
          for (const line of text.split('\n')) if (/^\d+$/.test(line.trim())) out.add(Number(line.trim()));
        }
      }
    };
    for (const h of this.everyHierarchy()) await walk(join(h, ...this.path(name)));
    return [...out];
  }

  async children(name: CgroupName): Promise<string[]> {
    const out = new Set<string>();
    for (const h of this.everyHierarchy()) {
      const entries = await readdir(join(h, ...this.path(name)), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const child = e.isDirectory() ? this.component(e.name) : undefined;
        if (child !== undefined) out.add(child);
      }
    }
    return [...out];
  }
}
