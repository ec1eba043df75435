/**
 * Wires the eviction manager into the agent (upstream NewMainKubelet's
 * eviction.NewManager and evictionManager.Start): thresholds from the
 * configuration (a bad one fails the start, with the field named), the
 * CRI/host stats, the active pods, the kill through the pod workers with
 * upstream's Failed/Evicted status, and node-level reclaim through container
 * and image GC. Call once, after the pod workers and GC exist; the returned
 * promise of `done` resolves after the loop stops.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import type { CriApi } from '../../cri/client.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import { filterOutInactivePods } from '../admission/admit.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import type { EventRecorder } from '../events/event-recorder.js';
import type { ImageGcManager } from '../images/image-gc-manager.js';
import type { ContainerGc } from '../kubelet/container-gc.js';
import type { PodManager } from '../podconfig/pod-manager.js';
import type { PoolSyncer } from '../kubelet/pool-syncer.js';
import type { HostProbe } from '../host/host-probe.js';
import type { PodWorkers } from '../pod-workers/pod-workers.js';
import { isMirrorPod } from '../podconfig/types.js';
import type { StatusManager } from '../status/status-manager.js';
import { CriEvictionStats } from './cri-eviction-stats.js';
import { EVICTED_REASON, EvictionManager } from './eviction-manager.js';
import type { EvictionStatsProvider } from './eviction-stats.js';
import { parseThresholds } from './thresholds.js';

export interface EvictionDeps {
  config: KubeletConfig;
  runner: Pick<TaskRunner, 'run'>;
  cri: Pick<CriApi, 'imageFsInfo'>;
  host: HostProbe;
  /** Node allocatable memory, for allocatableMemory.available. */
  allocatableMemory: () => string | undefined;
  podManager: Pick<PodManager, 'pods'>;
  statusManager: Pick<StatusManager, 'getPodStatus'>;
  podWorkers: Pick<PodWorkers, 'update' | 'isPodKnownTerminated' | 'isPodTerminationRequested' | 'shouldPodBeFinished'>;
  syncer: Pick<PoolSyncer, 'evictedStatus'>;
  containerGc: Pick<ContainerGc, 'deleteAllUnusedContainers'>;
  imageGc: Pick<ImageGcManager, 'deleteUnusedImages'>;
  recorder: EventRecorder;
  registry: Registry;
  clock: Clock;
  logger: Logger;
  signal: AbortSignal;
  /** For tests and benchmarks: other figures than the node's. */
  stats?: EvictionStatsProvider;
  monitoringPeriodMs?: number;
}

export function startEviction(d: EvictionDeps): { manager: EvictionManager; done: Promise<void> } {
  const { config, podWorkers } = d;
  const logger = d.logger.child({ component: 'eviction-manager' });
  const activePods = (): Pod[] =>
    filterOutInactivePods(
      d.podManager.pods().filter((p) => !isMirrorPod(p)),
      {
        isKnownTerminated: (uid) => podWorkers.isPodKnownTerminated(uid),
        isTerminationRequested: (uid) => podWorkers.isPodTerminationRequested(uid),
        statusOf: (uid) => d.statusManager.getPodStatus(uid),
      },
      // A pod already being killed cannot give back more by being evicted again.
    ).filter((p) => !podWorkers.isPodTerminationRequested(p.metadata.uid ?? ''));
  const manager = new EvictionManager({
    thresholds: parseThresholds(config),
    stats:
      d.stats ??
      new CriEvictionStats({
        runner: d.runner,
        cri: d.cri,
        host: d.host,
        rootDir: config.rootDir,
        podLogsDir: config.podLogsDir,
        allocatableMemory: d.allocatableMemory,
        clock: d.clock,
      }),
    activePods,
    killPod: (pod, gracePeriodSeconds, message) =>
      podWorkers.update({
        pod,
        updateType: 'kill',
        killPodOptions: {
          evict: true,
          gracePeriodSeconds,
          podStatusFunc: (p, runtime) => d.syncer.evictedStatus(p, runtime, { reason: EVICTED_REASON, message }),
        },
      }),
    podCleanedUp: (pod) => podWorkers.shouldPodBeFinished(pod.metadata.uid ?? ''),
    reclaimer: {
      deleteAllUnusedContainers: () => d.containerGc.deleteAllUnusedContainers(),
      deleteUnusedImages: () => d.imageGc.deleteUnusedImages(),
    },
    recorder: d.recorder,
    nodeName: config.nodeName,
    pressureTransitionPeriodMs: config.evictionPressureTransitionPeriod,
    maxPodGracePeriodSeconds: config.evictionMaxPodGracePeriod,
    localStorageCapacityIsolation: config.localStorageCapacityIsolation,
    monitoringPeriodMs: d.monitoringPeriodMs,
    clock: d.clock,
    logger,
    registry: d.registry,
  });
  return { manager, done: manager.start(d.signal) };
}
