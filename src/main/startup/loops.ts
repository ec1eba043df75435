/**
 * Start-up phase 8: the loops, started in upstream's Kubelet.Run order:
 * container log rotation, node status and lease, pod status sync, runtime
 * health, the PLEG, then the syncLoop; then the start-up progress line and
 * the container and image garbage collectors. Each registers its stop.
 */
import type { Registry } from 'prom-client';
import type { CriClient } from '../../cri/client.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import type { ClusterConnection } from './cluster-node.js';
import type { Recorder } from '../events/event-recorder.js';
import type { EvictionManager } from '../eviction/eviction-manager.js';
import { startEviction } from '../eviction/setup.js';
import { createImageGc } from '../images/image-gc-runtime.js';
import { BootProgress, bootCounts } from '../kubelet/boot-progress.js';
import { ContainerGc } from '../kubelet/container-gc.js';
import { ContainerLogManager } from '../logs/container-log-manager.js';
import { linuxHostProbe } from '../host/host-probe.js';
import { podStatusSyncDuration } from '../status/status-metrics.js';
import { StatusSync } from '../status/status-sync.js';
import type { AgentContext } from './context.js';
import type { AgentKubelet } from './kubelet.js';
import type { AgentNode } from './node.js';
import type { AgentPleg } from './pleg.js';

export function startLoops(
  ctx: AgentContext,
  parts: {
    registry: Registry;
    cluster: ClusterConnection | undefined;
    recorder: Recorder;
    cri: CriClient;
    runner: TaskRunner;
    pleg: AgentPleg;
    node: AgentNode;
    kubelet: AgentKubelet;
    /** Filled in here: the eviction manager, for node status and admission. */
    eviction: { manager?: EvictionManager };
  },
): void {
  const { config, clock, logger, signal, shutdown } = ctx;
  const { runner, cluster } = parts;
  const { pleg, runtimeState } = parts.pleg;
  const { clusterNode } = parts.node;
  const { syncLoop, podWorkers, podManager, statusManager, handlers, containerDeletor } = parts.kubelet;
  const kubeletLogger = logger.child({ component: 'kubelet' });

  const logManager = new ContainerLogManager({
    runner,
    clock,
    logger: kubeletLogger.child({ component: 'container-log-manager' }),
    maxSize: config.containerLogMaxSize,
    maxFiles: config.containerLogMaxFiles,
    maxWorkers: config.containerLogMaxWorkers,
    periodMs: config.containerLogMonitorInterval,
    podLogsDir: config.podLogsDir,
  });
  logManager.start(signal);
  shutdown.add('container log manager', () => logManager.idle());

  if (cluster && clusterNode) {
    clusterNode.start();
    new StatusSync({
      client: cluster.clients.main,
      statusManager,
      podManager,
      clock,
      logger: logger.child({ component: 'status-sync' }),
      syncDuration: podStatusSyncDuration(parts.registry),
    }).start(signal);
  }
  runtimeState.start(signal);
  pleg.start(signal);
  shutdown.add('PLEG', () => pleg.stopped());
  syncLoop.start(signal);
  shutdown.add('syncLoop', () => syncLoop.stopped());
  new BootProgress({
    clock,
    logger: kubeletLogger,
    sourcesReady: (): boolean => syncLoop.sourcesReady(),
    counts: () =>
      bootCounts(
        podManager.pods(),
        (uid) => handlers.isRejected(uid),
        (uid) => statusManager.getPodStatus(uid)?.phase,
      ),
  }).start(signal);
  shutdown.add('pod workers', () => podWorkers.idle());
  shutdown.add('container deletor', () => containerDeletor.idle());
  const containerGc = new ContainerGc({
    runner,
    clock,
    logger: kubeletLogger.child({ component: 'container-gc' }),
    podLogsDir: config.podLogsDir,
    containerLogsDir: config.containerLogsDir,
    shouldPodContentBeRemoved: (uid) => podWorkers.shouldPodContentBeRemoved(uid),
    shouldPodRuntimeBeRemoved: (uid) => podWorkers.shouldPodRuntimeBeRemoved(uid),
    allSourcesReady: (): boolean => syncLoop.sourcesReady(),
  });
  containerGc.start(signal);
  shutdown.add('container GC', () => containerGc.idle());
  const imageGc = createImageGc({
    config,
    cri: parts.cri,
    imageList: parts.node.imageList,
    host: linuxHostProbe,
    clock,
    logger: kubeletLogger,
    recorder: parts.recorder,
  });
  imageGc.start(signal);
  shutdown.add('image GC', () => imageGc.idle());
  const evictionLoop = startEviction({
    config,
    runner,
    cri: parts.cri,
    host: linuxHostProbe,
    allocatableMemory: () => parts.node.resources.allocatable.memory,
    podManager,
    statusManager,
    podWorkers,
    syncer: parts.kubelet.syncer,
    containerGc,
    imageGc,
    recorder: parts.recorder,
    registry: parts.registry,
    clock,
    logger: kubeletLogger,
    signal,
  });
  parts.eviction.manager = evictionLoop.manager;
  shutdown.add('eviction manager', () => evictionLoop.done);
}
