/**
 * Start-up phase 6: the kubelet proper. Volumes, the pod manager and status
 * manager, probes, pod cgroups, the syncer that runs pod syncs on the worker
 * pool, the pod workers, the syncLoop's handlers and the syncLoop itself.
 * Built, not started (the prober and the volume stack start as they are
 * built, as before).
 */
import type { Registry } from 'prom-client';
import { CauseLog } from '../../common/cause-log.js';
import { Late } from '../../common/late.js';
import type { Pod } from '../../api/pod.js';
import type { CriClient } from '../../cri/client.js';
import type { VersionResponse } from '../../gen/runtime/v1/api.js';
import { SIM_RUNTIME_NAME } from '../../sim/runtime-name.js';
import type { SharedState } from '../../shared/shared-state.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import { setupPodCgroups } from '../cgroups/setup-pod-cgroups.js';
import type { Recorder } from '../events/event-recorder.js';
import type { EvictionManager } from '../eviction/eviction-manager.js';
import { ContainerDeletor } from '../kubelet/container-deletor.js';
import { PodHandlers } from '../kubelet/handlers.js';
import { kubeletMetrics } from '../kubelet/kubelet-metrics.js';
import { PodManager } from '../podconfig/pod-manager.js';
import { PodObjectsResolver } from '../kubelet/pod-objects.js';
import { PoolSyncer } from '../kubelet/pool-syncer.js';
import type { ClusterConnection } from './cluster-node.js';
import { dirFailureCause } from '../node/dir-failure-cause.js';
import { RELIST_PERIOD_MS } from '../pleg/generic-pleg.js';
import { PodWorkers } from '../pod-workers/pod-workers.js';
import { startProber } from '../prober/start-prober.js';
import type { ProberManager } from '../prober/prober-manager.js';
import { PodStartMetrics } from '../status/pod-start-metrics.js';
import { StatusManager } from '../status/status-manager.js';
import { SyncLoop } from '../kubelet/sync-loop.js';
import { startVolumeStack } from '../volumes/volume-setup.js';
import type { AgentContext } from './context.js';
import type { AgentNode } from './node.js';
import type { AgentPleg } from './pleg.js';
import type { AgentSources } from './sources.js';

export interface AgentKubelet {
  podManager: PodManager;
  statusManager: StatusManager;
  prober: ProberManager;
  syncer: PoolSyncer;
  podWorkers: PodWorkers;
  containerDeletor: ContainerDeletor;
  handlers: PodHandlers;
  syncLoop: SyncLoop;
}

/** containerID prefix as upstream reports it: the runtime's name ("containerd", or ours). */
function runtimeName(name: string): string {
  return name || 'containerd';
}

export async function buildKubelet(
  ctx: AgentContext,
  parts: {
    rootDir: string;
    registry: Registry;
    cluster: ClusterConnection | undefined;
    recorder: Recorder;
    runtimeEndpoint: string;
    runtimeVersion: VersionResponse;
    cri: CriClient;
    shared: SharedState;
    runner: TaskRunner;
    pleg: AgentPleg;
    node: AgentNode;
    sources: AgentSources;
    /** Set here once the syncer is built (the PLEG was built before it). */
    syncerRef: Late<PoolSyncer>;
    /** Set once the eviction manager runs (the loops phase); admission asks it. */
    eviction: { manager?: EvictionManager };
    /** Set here once the volume manager is built: node status reports its volumes in use. */
    volumes: { inUse?: () => string[] };
  },
): Promise<AgentKubelet> {
  const { config, clock, logger, signal, shutdown } = ctx;
  const { cluster, recorder, registry, runner, shared, cri } = parts;
  const { queue, genericPleg, pleg, runtimeState } = parts.pleg;
  const { resources, mirrorClient } = parts.node;

  // Volumes: plugins, the volume manager (with what an earlier run left on disk) and pod-directory housekeeping.
  const volumes = await startVolumeStack({
    rootDir: parts.rootDir,
    nodeAllocatable: resources.allocatable,
    recorder,
    registry,
    clock,
    logger: logger.child({ component: 'volumes' }),
    signal,
    client: cluster?.clients.main,
    nodeName: config.nodeName,
    ...(parts.node.clusterNode && { nodeRegistered: () => parts.node.clusterNode!.status.whenRegistered() }),
  });
  shutdown.add('volume manager', () => volumes.idle());
  parts.volumes.inUse = () => volumes.manager.volumesInUse();

  const podManager = new PodManager();
  const statusManager = new StatusManager(() => clock.now(), { logger: logger.child({ component: 'status' }), podManager });
  const startMetrics = new PodStartMetrics(registry);
  const kubeletLogger = logger.child({ component: 'kubelet' });
  // Probes (prober/): the host runs on its own thread and reads statuses from the shared cache.
  const prober = startProber({
    thread: runner.threads > 0,
    runtimeEndpoint: parts.runtimeEndpoint,
    runtimeRequestTimeoutMs: config.runtimeRequestTimeout,
    cache: shared.cache,
    nodeIP: resources.info.ip,
    clock,
    queue,
    recorder,
    podOf: (uid) => podManager.get(uid),
    logger: logger.child({ component: 'prober' }),
  });
  shutdown.add('prober', () => prober.close());
  // cgroupsPerQOS: the QoS tiers now, each pod's cgroup before its sync, removals in housekeeping.
  const capacity = parts.node.collector.resources().capacity;
  const podCgroups = await setupPodCgroups(config, {
    simulated: parts.runtimeVersion.runtimeName === SIM_RUNTIME_NAME,
    capacity: { cpu: capacity.cpu ?? '0', memory: capacity.memory ?? '0' },
    // upstream filterOutTerminatedPods: a pod whose status is Succeeded or Failed no longer counts.
    activePods: () =>
      podManager.pods().filter((p) => !/^(Succeeded|Failed)$/.test(statusManager.getPodStatus(p.metadata.uid ?? '')?.phase ?? '')),
    runtimeInfo: async () => (await cri.status({ verbose: true }).catch(() => undefined))?.info,
    clock,
    logger: kubeletLogger.child({ component: 'cgroups' }),
  });
  if (podCgroups) shutdown.add('pod cgroups', () => podCgroups.idle());
  // The node's own directories full or unwritable: one report per cause, not one per pod.
  const nodeFailureCause = dirFailureCause([
    { path: config.rootDir, what: 'the root directory' },
    { path: config.podLogsDir, what: 'the pod log directory' },
    { path: config.containerLogsDir, what: 'the container log directory' },
  ]);
  const syncer = parts.syncerRef.set(
    new PoolSyncer({
      runner,
      cache: shared.cache,
      podManager,
      statusManager,
      node: resources.info,
      clock,
      logger: kubeletLogger,
      recorder,
      networkError: () => runtimeState.networkErrors(),
      nodeFailureCause,
      runtimeName: runtimeName(parts.runtimeVersion.runtimeName),
      metrics: kubeletMetrics(registry),
      // PoolRunner runs at least 16 tasks across its workers (8 per worker); leave a quarter for PLEG tasks.
      maxConcurrentSyncs: runner.threads > 0 ? Math.max(12, runner.threads * 6) : 16,
      cacheUnreliable: (uid) => pleg.inspectionFailed(uid),
      releaseCacheSlot: (uid) => pleg.releaseSlotWhenUnused(uid),
      // The evented PLEG hears of changes from the runtime's event stream.
      runtimeChanged: config.pleg === 'generic' ? () => genericPleg.relistSoon() : undefined,
      // upstream GetNewerThan, bounded by a relist period; then the task reads the runtime.
      cacheWaitMs: config.pleg === 'generic' ? RELIST_PERIOD_MS : 0,
      probes: prober,
      startMetrics,
      ...(mirrorClient && {
        syncMirrorPod: (pod: Pod) => mirrorClient.sync(pod, podManager.mirrorPodOf(pod), (m, p) => podManager.isMirrorPodOf(m, p)),
      }),
      volumes: volumes.manager,
      ...(volumes.objects && { podObjects: new PodObjectsResolver({ objects: volumes.objects, recorder }) }),
      ...(parts.sources.serviceLister && { serviceEnv: parts.sources.serviceLister }),
      ...(podCgroups && { podCgroups }),
    }),
  );
  const podWorkers = new PodWorkers({
    syncer,
    clock,
    resyncIntervalMs: config.syncFrequency,
    podStatus: (uid) => syncer.cachedStatus(uid),
    logger: kubeletLogger.child({ component: 'pod-workers' }),
    causes: { of: nodeFailureCause, log: new CauseLog(kubeletLogger.child({ component: 'pod-workers' }), clock) },
  });
  const containerDeletor = new ContainerDeletor(runner, kubeletLogger, config.containerLogsDir);
  // The handlers ask the syncLoop whether every source is ready; the syncLoop is built from the handlers.
  const syncLoopRef = new Late<SyncLoop>('the syncLoop');
  const handlers = new PodHandlers({
    podManager,
    podWorkers,
    statusManager,
    admitNode: {
      allocatable: resources.allocatable,
      name: config.nodeName,
      labels: resources.labels,
      sysctlAllowlist: resources.sysctlAllowlist,
      shuttingDown: () => signal.aborted,
      pressure: (pod) => parts.eviction.manager?.admit(pod) ?? { admit: true },
      maxContainersPerPod: config.maxContainersPerPod,
    },
    recorder,
    runtimeUids: () => shared.cache.uids(),
    cachedStatus: (uid) => syncer.cachedStatus(uid),
    cachePredatesTermination: (uid) => syncer.cachePredatesTermination(uid),
    containerDeletor,
    // upstream kl.sourcesReady: every source has delivered, and the syncLoop has handled what it delivered.
    allSourcesReady: (): boolean => syncLoopRef.get().sourcesReady(),
    mirrorClient,
    startMetrics,
    cleanupPodDirs: (isActive) => volumes.housekeeping(isActive),
    ...(podCgroups && { cleanupPodCgroups: (keep: (uid: string) => boolean) => podCgroups.cleanup(keep) }),
    prober,
    clock,
    logger: kubeletLogger,
  });
  const syncLoop = syncLoopRef.set(
    new SyncLoop({
      podConfig: parts.sources.podConfig,
      handlers,
      podWorkers,
      podManager,
      statusManager,
      runtimeState,
      clock,
      logger: kubeletLogger,
      queue,
      syncFrequencyMs: config.syncFrequency,
    }),
  );
  return { podManager, statusManager, prober, syncer, podWorkers, containerDeletor, handlers, syncLoop };
}
