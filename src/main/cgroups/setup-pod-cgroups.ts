/**
 * Start-up of the pod cgroup hierarchy (upstream ContainerManager setupNode
 * for cgroupsPerQOS): decides whether kubelet-ts manages pod cgroups, checks
 * the controllers, creates `<cgroupRoot>/kubepods` and its QoS tiers, and
 * returns the PodCgroups the syncer and housekeeping use (undefined: the
 * runtime places pods itself). Every setting it does not apply is either
 * refused here or named in one startup line.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import { realClock, type Clock } from '../../common/clock.js';
import { KubeletTsError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { QUOTA_PERIOD_US } from '../../pod/cpu-shares.js';
import { checkRequiredControllers, DEFAULT_CGROUP_FS_ROOT, readCgroupLayout } from './cgroup-controllers.js';
import { parseCgroupfsName, toCgroupfs } from './cgroup-name.js';
import { FsCgroupManager } from './fs-cgroup-manager.js';
import { killProcess, PodCgroupManager, type PodCgroups } from './pod-cgroups.js';
import { kubepodsLimits, QosCgroups } from './qos-cgroups.js';
import { runtimeCgroupDriver } from './runtime-cgroup-driver.js';

/** A cgroup setting kubelet-ts cannot honour in this combination. */
export class CgroupConfigError extends KubeletTsError {
  override readonly code = 'KTS_ERR_CGROUP_CONFIG';
}

export type CgroupSettings = Pick<
  KubeletConfig,
  | 'cgroupsPerQOS'
  | 'cgroupRoot'
  | 'cgroupDriver'
  | 'podPidsLimit'
  | 'otherSettings'
  | 'enforceNodeAllocatable'
  | 'systemReserved'
  | 'kubeReserved'
>;

export interface SetupPodCgroupsOptions {
  /** The embedded simulated runtime: it ignores cgroup_parent, so no cgroups are made. */
  simulated: boolean;
  capacity: { cpu: string; memory: string };
  activePods: () => readonly Pod[];
  logger: Logger;
  /** The cgroup mount root (tests: a tmp tree). */
  fsRoot?: string;
  /** The node's pid capacity (default: /proc/sys/kernel/pid_max); undefined when unknown. */
  pidMax?: () => Promise<number | undefined>;
  /** The runtime's verbose CRI Status info (to check its cgroup driver); undefined when unavailable. */
  runtimeInfo?: () => Promise<Record<string, string> | undefined>;
  kill?: (pid: number) => void;
  clock?: Clock;
}

/** /proc/sys/kernel/pid_max, as upstream pidlimit.Stats (undefined when unreadable). */
async function readPidMax(): Promise<number | undefined> {
  const text = await readFile('/proc/sys/kernel/pid_max', 'utf8').catch(() => '');
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

/** A permission or read-only error anywhere in the cause chain. */
function deniedAccess(err: unknown): boolean {
  for (let e = err as (NodeJS.ErrnoException & { cause?: unknown }) | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS') return true;
  }
  return false;
}

/** cpuCFSQuota (kept in otherSettings): CPU limits become CFS quotas unless it is false. */
export function cpuCFSQuotaOf(config: Pick<KubeletConfig, 'otherSettings'>): boolean {
  return config.otherSettings['cpuCFSQuota'] !== false;
}

export async function setupPodCgroups(config: CgroupSettings, options: SetupPodCgroupsOptions): Promise<PodCgroups | undefined> {
  const idle = [
    ...(config.cgroupRoot !== '' ? [`cgroupRoot ${config.cgroupRoot}`] : []),
    ...(config.cgroupDriver === 'systemd' ? ['cgroupDriver systemd'] : []),
  ];
  const idleNote = idle.length > 0 ? ` (${idle.join(' and ')} ${idle.length > 1 ? 'have' : 'has'} no effect either)` : '';
  if (!config.cgroupsPerQOS) {
    if (config.podPidsLimit > 0) {
      throw new CgroupConfigError('podPidsLimit is applied to pod cgroups, which need cgroupsPerQOS: true; set both or neither');
    }
    options.logger.info(
      "cgroupsPerQOS is false (upstream's default is true): no QoS or pod cgroups are made, the runtime places each pod" + idleNote,
    );
    return undefined;
  }
  // As upstream's hollow node (kubemark: a stub container manager), a simulated runtime gets no cgroups:
  // nothing on the host is touched, so a non-root `npm start` works with the default cgroupsPerQOS: true.
  if (options.simulated) {
    options.logger.info(
      'cgroupsPerQOS has no effect with the simulated runtime: it ignores cgroup_parent, so no QoS or pod cgroups are made' + idleNote,
    );
    return undefined;
  }
  const runtimeDriver = runtimeCgroupDriver(await options.runtimeInfo?.());
  if (runtimeDriver !== undefined && runtimeDriver !== config.cgroupDriver) {
    throw new CgroupConfigError(
      `cgroupDriver is ${config.cgroupDriver} but the runtime uses the ${runtimeDriver} cgroup driver (containerd: SystemdCgroup = ${runtimeDriver === 'systemd'}); they must match`,
    );
  }
  const layout = await readCgroupLayout(options.fsRoot ?? DEFAULT_CGROUP_FS_ROOT);
  checkRequiredControllers(layout, { pids: config.podPidsLimit > 0 });
  // systemd: upstream's slice names and on-disk layout, written through the cgroup filesystem (no D-Bus).
  const manager = new FsCgroupManager({ layout, driver: config.cgroupDriver });
  // Upstream: cgroupRoot is a cgroupfs path ('' means '/') and must exist in every required controller.
  const root = parseCgroupfsName(config.cgroupRoot);
  if (root.length > 0 && !(await manager.exists(root))) {
    throw new CgroupConfigError(
      `cgroupRoot ${toCgroupfs(root)}${config.cgroupDriver === 'systemd' ? ` (${manager.name(root)})` : ''} does not exist in every cgroup controller (cpu, cpuacct, cpuset, memory, pids, hugetlb as mounted); ` +
        'create it first (as upstream requires), or use another cgroupRoot',
    );
  }
  // Upstream's internal capacity has the pid_max as "pid": kubepods' pids.max (where the pids controller is).
  const pidMax = layout.controllers.has('pids') ? await (options.pidMax ?? readPidMax)() : undefined;
  const capacity = { ...options.capacity, ...(pidMax !== undefined && { pid: String(pidMax) }) };
  const kubepods = kubepodsLimits(capacity, {
    enforcePods: config.enforceNodeAllocatable.includes('pods'),
    systemReserved: config.systemReserved,
    kubeReserved: config.kubeReserved,
  });
  const qos = new QosCgroups({ manager, root, kubepods, activePods: options.activePods });
  try {
    await qos.start();
  } catch (err) {
    if (!deniedAccess(err)) throw err;
    throw new CgroupConfigError(
      `cannot create the QoS cgroups under ${manager.name(root)} (${errorMessage(err)}): cgroupsPerQOS needs write access to ` +
        `${options.fsRoot ?? DEFAULT_CGROUP_FS_ROOT} (run as root), or set cgroupsPerQOS: false`,
      { cause: err },
    );
  }
  options.logger.info(
    {
      cgroupRoot: manager.name(root),
      kubepods: manager.name(qos.kubepods),
      limits: kubepods,
      cgroupVersion: layout.version,
      cgroupDriver: config.cgroupDriver,
    },
    'Created the QoS cgroups; pods get cgroups of their own under them',
  );
  return new PodCgroupManager({
    manager,
    qos,
    resources: { enforceCPULimits: cpuCFSQuotaOf(config), cpuPeriodUs: QUOTA_PERIOD_US },
    podPidsLimit: config.podPidsLimit,
    kill: options.kill ?? killProcess,
    clock: options.clock ?? realClock,
    logger: options.logger,
  });
}
