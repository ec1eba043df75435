/**
 * The syncLoop's handlers (upstream SyncHandler: HandlePodAdditions,
 * HandlePodUpdates, HandlePodRemoves, HandlePodReconcile, HandlePodSyncs,
 * HandlePodCleanups) plus PLEG event dispatch. They update desired state
 * (PodManager), admit pods, and hand work to the pod workers; they never
 * block on CRI. Main thread only.
 */
import type { Logger } from 'pino';
import { podFullName, type Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { PlegEvent } from '../../runtime/pleg-event.js';
import type { PodStatus as RuntimePodStatus, RuntimePod } from '../../runtime/types.js';
import { canAdmitPod, filterOutInactivePods, rejectedPodStatus, type AdmitNode } from '../admission/admit.js';
import { isRuntimeStatusTerminal, type PodWorkers } from '../pod-workers/pod-workers.js';
import type { StatusManager } from '../status/status-manager.js';
import type { PodManager } from '../podconfig/pod-manager.js';
import type { ContainerDeletor } from './container-deletor.js';
import { pastActiveDeadline } from './active-deadline.js';
import type { MirrorClient } from './mirror-client.js';
import { API_SOURCE, CONFIG_SOURCE_ANNOTATION, isMirrorPod } from '../podconfig/types.js';
import type { PodStartMetrics } from '../status/pod-start-metrics.js';
import { errorMessage } from '../../common/error-message.js';
import { podReference, type EventRecorder } from '../events/event-recorder.js';

export interface HandlerDeps {
  podManager: PodManager;
  podWorkers: PodWorkers;
  statusManager: StatusManager;
  admitNode: AdmitNode;
  /** A rejected pod gets a Warning event with the admission's reason and message (upstream rejectPod). */
  recorder: EventRecorder;
  /** UIDs the runtime has (pods holding a status cache slot). */
  runtimeUids(): string[];
  cachedStatus(uid: string): RuntimePodStatus | undefined;
  /** A pod terminated here whose cached status may predate the stop (PodSyncer.cachePredatesTermination). */
  cachePredatesTermination?(uid: string): boolean;
  containerDeletor: ContainerDeletor;
  /** Every pod source has delivered once (upstream sourcesReady.AllReady). */
  allSourcesReady(): boolean;
  /** Deletes mirror pods whose static pod is gone (cluster mode only). */
  mirrorClient?: Pick<MirrorClient, 'delete'>;
  /** Pod start-up SLI: pods as the apiserver watch delivers them. */
  startMetrics?: Pick<PodStartMetrics, 'observedOnWatch' | 'forget'>;
  /**
   * Volume and pod-directory housekeeping (upstream cleanupOrphanedPodDirs):
   * started in the background; `isActive` tells pods whose volumes must stay.
   */
  cleanupPodDirs?(isActive: (uid: string) => boolean): void;
  /**
   * cgroupsPerQOS (upstream cleanupOrphanedPodCgroups): removes, in the
   * background, the pod cgroups whose pod `keep` rejects.
   */
  cleanupPodCgroups?(keep: (uid: string) => boolean): void;
  /** The prober (upstream probeManager): admitted pods get probe workers; housekeeping stops those of pods no longer running. */
  prober?: { addPod(pod: Pod): void; cleanupPods(possiblyRunning: Iterable<string>): void };
  clock: Clock;
  logger: Logger;
}

/** Orphan pods are killed quickly (upstream: a 1 s grace override). */
export const ORPHAN_GRACE_PERIOD_SECONDS = 1;

const byCreation = (a: Pod, b: Pod) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '');

function toRuntimePod(s: RuntimePodStatus): RuntimePod {
  return {
    uid: s.uid,
    name: s.name,
    namespace: s.namespace,
    sandboxes: s.sandboxStatuses.map((x) => ({ id: x.id, state: x.state, createdAt: x.createdAt })),
    containers: s.containerStatuses.map((c) => ({
      id: c.id,
      name: c.name,
      state: c.state,
      hash: c.hash,
      createdAt: c.createdAt,
      sandboxId: c.sandboxId,
    })),
  };
}

export class PodHandlers {
  /** Pods admission rejected: they never start, and housekeeping does not restart them. */
  private readonly rejected = new Set<string>();

  constructor(private readonly d: HandlerDeps) {}

  /** The runtime still runs something of the pod (a ready sandbox or a live container). */
  private runtimeActive(uid: string): boolean {
    const s = this.d.cachedStatus(uid);
    return (
      !!s &&
      (s.sandboxStatuses.some((b) => b.state === 'ready') ||
        s.containerStatuses.some((c) => c.state === 'running' || c.state === 'created'))
    );
  }

  handlePodAdditions(pods: Pod[]): void {
    const { podManager, podWorkers, statusManager, clock, logger } = this.d;
    for (const pod of [...pods].sort(byCreation)) {
      const uid = pod.metadata.uid ?? '';
      podManager.addOrUpdate(pod);
      this.observedOnWatch(pod);
      if (isMirrorPod(pod)) {
        this.handleMirrorPod(pod);
        continue;
      }
      if (!podWorkers.isPodTerminationRequested(uid)) {
        const active = filterOutInactivePods(
          podManager.pods().filter((p) => p !== pod),
          {
            isKnownTerminated: (uid) => podWorkers.isPodKnownTerminated(uid),
            isTerminationRequested: (uid) => podWorkers.isPodTerminationRequested(uid),
            statusOf: (uid) => statusManager.getPodStatus(uid),
          },
        );
        const verdict = canAdmitPod(pod, active, this.d.admitNode);
        if (!verdict.admit) {
          this.rejected.add(uid);
          this.d.recorder.record(podReference(pod), 'Warning', verdict.reason, verdict.message);
          statusManager.setPodStatus(pod, rejectedPodStatus(pod, verdict.reason, verdict.message, clock.now()));
          logger.warn(
            { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, reason: verdict.reason, message: verdict.message },
            'Pod rejected by admission',
          );
          continue;
        }
      }
      podWorkers.update({ pod, updateType: 'create', startTime: clock.now() });
      this.d.prober?.addPod(pod);
    }
  }

  /** The pod was rejected by admission (it is not run). */
  isRejected(uid: string): boolean {
    return this.rejected.has(uid);
  }

  handlePodUpdates(pods: Pod[]): void {
    for (const pod of pods) {
      this.d.podManager.addOrUpdate(pod);
      this.observedOnWatch(pod);
      if (isMirrorPod(pod)) {
        this.handleMirrorPod(pod);
        continue;
      }
      if (this.rejected.has(pod.metadata.uid ?? '')) continue;
      this.d.podWorkers.update({ pod, updateType: 'update', startTime: this.d.clock.now() });
    }
  }

  /**
   * Upstream HandlePodRemoves + deletePod: the pod leaves the desired set at
   * once, but before every source has delivered, nothing is killed (a source
   * that has not reported yet may still want it); housekeeping's orphan
   * cleanup kills it later if it is really gone.
   */
  handlePodRemoves(pods: Pod[]): void {
    for (const pod of pods) {
      const uid = pod.metadata.uid ?? '';
      this.d.podManager.remove(pod);
      this.d.startMetrics?.forget(uid);
      if (isMirrorPod(pod)) {
        this.handleMirrorPod(pod);
        continue;
      }
      if (this.rejected.delete(uid)) {
        this.d.statusManager.removePodStatus(uid);
        continue;
      }
      if (!this.d.allSourcesReady()) {
        this.d.logger.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, 'Skipping delete because sources aren’t ready yet');
        continue;
      }
      this.d.podWorkers.update({ pod, updateType: 'kill', startTime: this.d.clock.now() });
    }
  }

  /** Upstream handleMirrorPod: a mirror pod changed or went away: sync its static pod (which recreates it if needed). */
  private handleMirrorPod(mirror: Pod): void {
    const pod = this.d.podManager.podOfMirror(mirror);
    if (pod && !this.rejected.has(pod.metadata.uid ?? ''))
      this.d.podWorkers.update({ pod, updateType: 'update', startTime: this.d.clock.now() });
  }

  handlePodReconcile(pods: Pod[]): void {
    for (const pod of pods) {
      this.d.podManager.addOrUpdate(pod);
      this.observedOnWatch(pod);
    }
  }

  /** Pods from the apiserver, as its watch delivered them (pod start-up SLI). */
  private observedOnWatch(pod: Pod): void {
    if (pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION] === API_SOURCE && !isMirrorPod(pod))
      this.d.startMetrics?.observedOnWatch(pod, this.d.clock.now());
  }

  /**
   * Upstream getPodsToSync: the pods whose resync or retry is due, plus every
   * desired pod a sync-loop handler wants synced now (past its active deadline).
   */
  podsToSync(due: Iterable<string>): string[] {
    const uids = new Set(due);
    const now = this.d.clock.now();
    for (const pod of this.d.podManager.pods()) {
      if (pod.spec.activeDeadlineSeconds == null) continue;
      const uid = pod.metadata.uid ?? '';
      if (!uids.has(uid) && pastActiveDeadline(pod, this.d.statusManager.getPodStatus(uid), now)) uids.add(uid);
    }
    return [...uids];
  }

  handlePodSyncs(uids: Iterable<string>): void {
    for (const uid of uids) {
      const pod = this.d.podManager.get(uid);
      if (pod && !this.rejected.has(uid)) this.d.podWorkers.update({ pod, updateType: 'sync' });
    }
  }

  /**
   * upstream: every event but ContainerRemoved syncs its pod (isSyncPodWorthy);
   * a ContainerDied also cleans up the pod's older dead containers.
   */
  handlePlegEvent(e: PlegEvent): void {
    if (e.type !== 'ContainerRemoved') this.handlePodSyncs([e.id]);
    if (e.type === 'ContainerDied') {
      const status = this.d.cachedStatus(e.id);
      if (status) this.d.containerDeletor.deleteContainersInPod(e.data, status, this.d.podWorkers.shouldPodContentBeRemoved(e.id));
    }
  }

  /** Upstream DeleteOrphanedMirrorPods: mirror pods whose static pod is gone (and not still terminating). */
  private deleteOrphanedMirrorPods(): void {
    const { podManager, podWorkers, mirrorClient, logger } = this.d;
    if (!mirrorClient) return;
    for (const mirror of podManager.mirrorPods()) {
      if (podManager.podOfMirror(mirror) || podWorkers.isPodForMirrorPodTerminatingByFullName(podFullName(mirror))) continue;
      const name = `${mirror.metadata.namespace}/${mirror.metadata.name}`;
      mirrorClient.delete(mirror.metadata.namespace ?? 'default', mirror.metadata.name ?? '', mirror.metadata.uid).then(
        (deleted) => deleted && logger.info({ pod: name }, 'Deleted orphaned mirror pod'),
        (err: unknown) => logger.warn({ pod: name, err: errorMessage(err) }, 'Failed to delete an orphaned mirror pod; will retry'),
      );
    }
  }

  /** upstream HandlePodCleanups, run by housekeeping once all sources are ready. */
  handlePodCleanups(): void {
    const { podManager, podWorkers, statusManager, logger } = this.d;
    const desired = podManager.pods().filter((p) => !this.rejected.has(p.metadata.uid ?? ''));
    const workers = podWorkers.syncKnownPods(desired);
    statusManager.removeOrphanedStatuses((uid) => podManager.get(uid) !== undefined || workers.has(uid));
    this.deleteOrphanedMirrorPods();
    // Stop probing pods that are not running (upstream CleanupPods(possiblyRunningPods)).
    this.d.prober?.cleanupPods([...workers].filter(([, w]) => w.state !== 'terminated').map(([uid]) => uid));

    // Runtime pods no config knows and no worker handles: kill them (removal is left to container GC).
    for (const uid of this.d.runtimeUids()) {
      if (podManager.get(uid) || workers.has(uid)) continue;
      const status = this.d.cachedStatus(uid);
      // Only pods with something running (upstream runtimeCache.GetPods); dead leftovers are container GC's.
      if (!status || isRuntimeStatusTerminal(status)) continue;
      // A pod its worker just stopped may still show running in a relist that listed before the stop.
      if (this.d.cachePredatesTermination?.(uid)) continue;
      logger.info({ podUID: uid, pod: `${status.namespace}/${status.name}` }, 'Clean up orphaned pod known only to the runtime');
      podWorkers.update({
        runningPod: toRuntimePod(status),
        updateType: 'kill',
        killPodOptions: { gracePeriodSeconds: ORPHAN_GRACE_PERIOD_SECONDS },
      });
    }

    this.d.cleanupPodDirs?.((uid) => podManager.get(uid) !== undefined || workers.has(uid) || this.runtimeActive(uid));
    // A pod keeps its cgroup while its worker has not terminated it, while the runtime still runs
    // something of it, and, when desired, until its worker starts (upstream keeps active pods' cgroups).
    this.d.cleanupPodCgroups?.((uid) => {
      const w = workers.get(uid);
      if (w) return w.state !== 'terminated' || this.runtimeActive(uid);
      if (this.runtimeActive(uid)) return true;
      return podManager.get(uid) !== undefined && !this.rejected.has(uid) && !podWorkers.isPodKnownTerminated(uid);
    });

    // Desired pods the workers do not know (e.g. a worker was pruned): start them again.
    for (const pod of desired) {
      const uid = pod.metadata.uid ?? '';
      if (workers.has(uid) || podWorkers.isPodKnownTerminated(uid)) continue;
      logger.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, 'Pod is desired but has no worker; starting it');
      podWorkers.update({ pod, updateType: 'create', startTime: this.d.clock.now() });
      // Its probes ended with its termination; upstream does not restart them here (a static pod restarted
      // under the same UID would run unprobed), kubelet-ts does.
      this.d.prober?.addPod(pod);
    }
  }
}
