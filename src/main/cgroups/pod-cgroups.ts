/**
 * Pod cgroups (upstream pod_container_manager_linux.go and kubelet's
 * cleanupOrphanedPodCgroups): `<tier>/pod<uid>`, created with the pod's
 * resource configuration before its sandbox, handed to the runtime as the
 * sandbox's cgroup_parent, and destroyed by housekeeping once the pod no
 * longer needs it.
 *
 * Destroying a pod cgroup first SIGKILLs every process still in it (as
 * upstream tryKillingCgroupProcesses; up to 5 passes), then removes the
 * directories bottom-up. Normally nothing is left: the runtime has stopped
 * the containers, and runc removed their cgroups.
 *
 * Main thread only. ensureExists is called by the pod syncer; cleanup by
 * housekeeping (one pass at a time; a pass still running skips the next).
 */
import type { Logger } from 'pino';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { getPodQOS } from '../../pod/qos.js';
import { childCgroupName, type CgroupName } from './cgroup-name.js';
import type { CgroupManager, ResourceConfig } from './cgroup-manager.js';
import type { QosCgroups } from './qos-cgroups.js';
import { resourceConfigForPod, type PodResourceOptions } from './resource-config.js';
import { errorMessage } from '../../common/error-message.js';

/** Upstream podCgroupNamePrefix. */
export const POD_CGROUP_PREFIX = 'pod';
const KILL_PASSES = 5;
/** Upstream periodicQOSCgroupUpdateInterval. */
export const QOS_UPDATE_PERIOD_MS = 60_000;

/** What the pod syncer and housekeeping need of the pod cgroups. */
export interface PodCgroups {
  /** The pod's cgroup in the driver's form: the sandbox's cgroup_parent. */
  cgroupParent(pod: Pod): string;
  /** Creates the pod's cgroup unless it exists (updating the QoS tiers first, as upstream syncPod). */
  ensureExists(pod: Pod): Promise<void>;
  /**
   * Starts a background pass that destroys the pod cgroups under the tiers
   * whose pod `keep` rejects, then updates the QoS tiers if it removed one
   * or a minute has passed since their last update. Errors are logged;
   * the next pass tries again.
   */
  cleanup(keep: (uid: string) => boolean): void;
  /** Resolves when the running cleanup pass (if any) has ended. */
  idle(): Promise<void>;
}

export interface PodCgroupManagerOptions {
  manager: CgroupManager;
  qos: QosCgroups;
  resources: PodResourceOptions;
  /** podPidsLimit: > 0 is written to the pod cgroup's pids.max; -1 leaves it unlimited. */
  podPidsLimit: number;
  /** Sends SIGKILL to one process; throws when it could not (a process already gone is not an error). */
  kill(pid: number): void;
  clock: Clock;
  logger: Logger;
}

export class PodCgroupManager implements PodCgroups {
  private running: Promise<void> | undefined;
  private lastQosUpdate = 0;

  constructor(private readonly options: Readonly<PodCgroupManagerOptions>) {}

  /** The pod's cgroup name (upstream GetPodContainerName). */
  nameOf(pod: Pod): CgroupName {
    return childCgroupName(this.options.qos.tierOf(getPodQOS(pod)), POD_CGROUP_PREFIX + (pod.metadata.uid ?? ''));
  }

  cgroupParent(pod: Pod): string {
    return this.options.manager.name(this.nameOf(pod));
  }

  /** The pod cgroup's resources (ResourceConfigForPod plus the pids limit). */
  resourcesOf(pod: Pod): ResourceConfig {
    const r = resourceConfigForPod(pod, this.options.resources);
    return this.options.podPidsLimit > 0 ? { ...r, pidsLimit: this.options.podPidsLimit } : r;
  }

  async ensureExists(pod: Pod): Promise<void> {
    const name = this.nameOf(pod);
    if (await this.options.manager.exists(name)) return;
    await this.updateQos();
    await this.options.manager.create(name, this.resourcesOf(pod));
  }

  /** Upstream GetAllPodsFromCgroups: pod uid → its cgroup, found under the three tiers. */
  async podCgroups(): Promise<Map<string, CgroupName>> {
    const { qos, manager } = this.options;
    const out = new Map<string, CgroupName>();
    for (const tier of [qos.kubepods, qos.burstable, qos.besteffort]) {
      for (const child of await manager.children(tier)) {
        if (child.startsWith(POD_CGROUP_PREFIX) && child.length > POD_CGROUP_PREFIX.length) {
          out.set(child.slice(POD_CGROUP_PREFIX.length), childCgroupName(tier, child));
        }
      }
    }
    return out;
  }

  /** Upstream Destroy: kills what is left in the cgroup, then removes it. */
  async destroy(name: CgroupName): Promise<void> {
    const killed = new Set<number>();
    let failures: string[] = [];
    const pids = await this.options.manager.pids(name);
    for (let pass = 0; pass < KILL_PASSES && killed.size < pids.length; pass++) {
      failures = [];
      for (const pid of pids) {
        if (killed.has(pid)) continue;
        try {
          this.options.kill(pid);
          killed.add(pid);
        } catch (err) {
          failures.push(`${pid}: ${errorMessage(err)}`);
        }
      }
    }
    if (failures.length > 0)
      throw new Error(`cannot kill the processes left in ${this.options.manager.name(name)} (${failures.join('; ')})`);
    if (killed.size > 0)
      this.options.logger.info({ cgroup: this.options.manager.name(name), pids: [...killed] }, 'Killed processes left in a pod cgroup');
    await this.options.manager.destroy(name);
  }

  cleanup(keep: (uid: string) => boolean): void {
    if (this.running) return;
    this.running = this.cleanupPass(keep)
      .catch((err: unknown) => this.options.logger.warn({ err: errorMessage(err) }, 'Pod cgroup cleanup failed; will retry'))
      .finally(() => (this.running = undefined));
  }

  private async updateQos(): Promise<void> {
    this.lastQosUpdate = this.options.clock.now();
    await this.options.qos.update();
  }

  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async cleanupPass(keep: (uid: string) => boolean): Promise<void> {
    let removed = 0;
    for (const [uid, name] of await this.podCgroups()) {
      if (keep(uid)) continue;
      try {
        await this.destroy(name);
        removed++;
        this.options.logger.info(
          { podUID: uid, cgroup: this.options.manager.name(name) },
          'Removed the cgroup of a pod that no longer runs',
        );
      } catch (err) {
        this.options.logger.warn({ podUID: uid, err: errorMessage(err) }, 'Failed to remove a pod cgroup; will retry');
      }
    }
    // Upstream updates the tiers when a pod cgroup is made and every minute; here also when one was removed.
    if (removed > 0 || this.options.clock.now() - this.lastQosUpdate >= QOS_UPDATE_PERIOD_MS) {
      await this.updateQos();
      this.options.logger.debug({ removed, burstableShares: this.options.qos.burstableShares() }, 'Updated the QoS cgroups');
    }
  }
}

/** process.kill with SIGKILL; a process that is already gone (ESRCH) counts as killed. */
export function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}
