/**
 * Which cgroup hierarchies the node has and whether the kubelet's required
 * controllers are among them (upstream container_manager_linux.go
 * validateSystemRequirements and cgroup_manager_linux.go Exists' list).
 *
 * v1.20 requires cpu, cpuacct, cpuset and memory (pids is in Exists' list,
 * so a v1.20 kubelet with pids unmounted fails to create pod cgroups);
 * kubelet-ts requires pids only when podPidsLimit is set, and creates pod
 * cgroups in it whenever it is mounted. hugetlb is optional, as upstream:
 * when mounted, cgroups are created in it too; kubelet-ts writes no hugepage
 * limits (hugepages-* requests are not enforced in cgroups).
 *
 * `fsRoot` is the cgroup mount root (/sys/fs/cgroup); tests pass a tmp tree.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeletTsError } from '../../common/errors.js';

export const DEFAULT_CGROUP_FS_ROOT = '/sys/fs/cgroup';

/** A required cgroup controller is not mounted (v1) or not available (v2). */
export class MissingCgroupControllerError extends KubeletTsError {
  override readonly code = 'KTS_ERR_CGROUP_CONTROLLER';
}

export interface CgroupLayout {
  version: 1 | 2;
  /** v1: controller → hierarchy directory (a co-mounted pair shares one); v2: controller → fsRoot. */
  controllers: Map<string, string>;
  /** v1: the distinct hierarchy directories; v2: [fsRoot]. */
  hierarchies: string[];
  /**
   * v1 hierarchies without controllers kubelet-ts writes, where the runtime
   * (runc) also makes each container's cgroup: the named systemd hierarchy
   * and, on a hybrid host, the v2 mount (`unified`). Pod cgroups are
   * searched for and removed there too.
   */
  extra: string[];
}

const V1_REQUIRED = ['cpu', 'cpuacct', 'cpuset', 'memory'];
/** v2 has no cpuacct (cpu accounting is built in). */
const V2_REQUIRED = ['cpu', 'cpuset', 'memory'];
/** Named v1 hierarchies and the v2 mount of a hybrid layout hold no controllers to create in. */
const NOT_CONTROLLERS = new Set(['unified', 'systemd']);

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Reads the layout under fsRoot: v2 when fsRoot itself is a unified mount (it has cgroup.controllers). */
export async function readCgroupLayout(fsRoot = DEFAULT_CGROUP_FS_ROOT): Promise<CgroupLayout> {
  if (await exists(join(fsRoot, 'cgroup.controllers'))) {
    const names = (await readFile(join(fsRoot, 'cgroup.controllers'), 'utf8')).split(/\s+/).filter((c) => c !== '');
    return { version: 2, controllers: new Map(names.map((c) => [c, fsRoot])), hierarchies: [fsRoot], extra: [] };
  }
  const controllers = new Map<string, string>();
  const seen = new Map<string, string>();
  const extra: string[] = [];
  for (const entry of await readdir(fsRoot)) {
    const dir = join(fsRoot, entry);
    const st = await stat(dir).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    if (NOT_CONTROLLERS.has(entry) || entry.startsWith('name=')) {
      extra.push(dir);
      continue;
    }
    const real = await realpath(dir);
    // cpu -> cpu,cpuacct: one hierarchy under several names; keep the first path seen.
    if (!seen.has(real)) seen.set(real, dir);
    for (const c of entry.split(',')) if (!controllers.has(c)) controllers.set(c, seen.get(real)!);
  }
  return { version: 1, controllers, hierarchies: [...new Set(controllers.values())], extra };
}

/** Throws naming every required controller the layout lacks. */
export function checkRequiredControllers(layout: CgroupLayout, opts: { pids: boolean }): void {
  const required = [...(layout.version === 2 ? V2_REQUIRED : V1_REQUIRED), ...(opts.pids ? ['pids'] : [])];
  const missing = required.filter((c) => !layout.controllers.has(c));
  if (missing.length === 0) return;
  const where = layout.version === 2 ? 'in the root cgroup.controllers (cgroup v2)' : 'mounted (cgroup v1)';
  throw new MissingCgroupControllerError(
    `cgroupsPerQOS needs the cgroup controller(s) ${missing.join(', ')}, which are not ${where}` +
      (opts.pids && missing.includes('pids') ? ' (pids is needed for podPidsLimit)' : '') +
      '; enable them in the kernel/boot configuration, or set cgroupsPerQOS: false',
  );
}
