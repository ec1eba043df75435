/**
 * Starts the node agent from a resolved configuration and wires its parts:
 * the container runtime (or the embedded simulator), the shared-memory state
 * and worker pool, the PLEG, the pod sources and their merge, the syncLoop
 * and the HTTP endpoints. Owns their shutdown order.
 */
import { setMaxListeners } from 'node:events';
import os from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { realClock, type Clock } from '../common/clock.js';
import { CriClient } from '../cri/client.js';
import type { KubeletConfig } from './config/kubelet-config.js';
import type { ConfigSources } from './config/load-config.js';
import { configSummary } from './cli.js';
import { startEmbeddedSim, type EmbeddedSim } from './embedded-sim.js';
import { prepareStateDirs } from './state-dirs.js';
import { boundPort, startHealthzServerRetrying, type HealthCheck } from './http/server.js';
import { LogHealth } from './http/log-health.js';
import { startKubeletServers } from './server/start-servers.js';
import { ContainerLogManager } from './logs/container-log-manager.js';
import { registerMetricBlock } from './metrics/shared-collectors.js';
import { GenericPleg, RELIST_PERIOD_MS } from './pleg/generic-pleg.js';
import { eventedPlegMetrics, plegMetrics } from './pleg/pleg-metrics.js';
import { EventedPleg } from './pleg/evented-pleg.js';
import { InlineContainerEventSource, WorkerContainerEventSource } from './pleg/container-event-source.js';
import type { PodLifecycleEventGenerator } from './pleg/pleg.js';
import type { PlegEvent } from '../runtime/pleg-event.js';
import { addStaticSources } from './podconfig/static-sources.js';
import { PodConfig } from './podconfig/pod-config.js';
import { waitForRuntime } from './runtime-readiness.js';
import { createSharedState } from '../workers/shared-state.js';
import { imagePullLimits } from '../workers/shared/image-pull-gate.js';
import { createTaskRunner, PoolRunner } from '../workers/task-runner.js';
import { setVerbosity, verbosityOf } from '../common/logger.js';
import { RUNTIME_OPS_DURATION, RUNTIME_OPS_ERRORS, RUNTIME_OPS_TOTAL, sharedRuntimeObserver } from '../workers/worker-metrics.js';
import { SyncLoop } from './sync-loop/sync-loop.js';
import { SyncLoopQueue } from './sync-loop/sync-loop-queue.js';
import { RuntimeState } from './kubelet/runtime-state.js';
import { nodeResources } from './kubelet/node-resources.js';
import { connectCluster, clusterNode as makeClusterNode } from './cluster-node.js';
import { nodeReference, Recorder } from './events/event-recorder.js';
import { linuxHostProbe } from './node/host-probe.js';
import { NodeStatusInputsCollector } from './node/node-status-inputs.js';
import { startPodCidr } from './node/pod-cidr.js';
import { nodeNameMetric } from './node/node-metrics.js';
import { kubeletVersion, packageVersion } from './version.js';
import { PodManager } from './kubelet/pod-manager.js';
import { PoolSyncer } from './kubelet/pool-syncer.js';
import { kubeletMetrics } from './kubelet/kubelet-metrics.js';
import { PodHandlers } from './kubelet/handlers.js';
import { BootProgress, bootCounts } from './kubelet/boot-progress.js';
import { ContainerDeletor } from './kubelet/container-deletor.js';
import { ContainerGc } from './kubelet/container-gc.js';
import { createImageGc } from './images/image-gc-runtime.js';
import { ImageListCache } from './images/image-list-cache.js';
import { StatusManager } from './status/status-manager.js';
import { podStatusSyncDuration } from './status/status-metrics.js';
import { StatusSync } from './status/status-sync.js';
import { PodStartMetrics } from './status/pod-start-metrics.js';
import { MirrorClient } from './kubelet/mirror-client.js';
import { ApiSource } from './podconfig/api-source.js';
import type { Pod } from '../api/pod.js';
import { PodWorkers } from './pod-workers/pod-workers.js';
import { startVolumeStack } from './volumes/volume-setup.js';
import { startProber } from './prober/start-prober.js';
import { PodObjectsResolver } from './kubelet/pod-objects.js';
import { ServiceLister } from './kubelet/service-env.js';
import { setupPodCgroups } from './cgroups/setup-pod-cgroups.js';
import { SIM_RUNTIME_NAME } from '../sim/runtime-service.js';

/** containerID prefix as upstream reports it: the runtime's name ("containerd", or ours). */
function runtimeName(name: string): string {
  return name || 'containerd';
}

export interface AgentHandle {
  /** Bound ports (useful when configured as 0); 0 when the server is off. */
  port: number;
  readOnlyPort: number;
  healthzPort: number;
  runtimeEndpoint: string;
  registry: Registry;
  stop(): Promise<void>;
}

export interface AgentOptions {
  clock?: Clock;
  /** Where each setting came from, for the start line. */
  sources?: ConfigSources;
}

const HELP = {
  [RUNTIME_OPS_TOTAL]: 'Cumulative number of runtime operations by operation type.',
  [RUNTIME_OPS_ERRORS]: 'Cumulative number of runtime operation errors by operation type.',
  [RUNTIME_OPS_DURATION]: 'Duration in seconds of runtime operations. Broken down by operation type.',
};

export async function startAgent(config: KubeletConfig, logger: Logger, options: AgentOptions = {}): Promise<AgentHandle> {
  const clock = options.clock ?? realClock;
  const stops: (() => Promise<void> | void)[] = [];
  const controller = new AbortController();
  const signal = controller.signal;
  // Every loop of the agent waits on this one signal (timers, requests, streams).
  setMaxListeners(1000, signal);
  const stop = async () => {
    controller.abort();
    for (const s of stops.reverse()) await s();
  };
  try {
    const rootDir = resolve(config.rootDir);
    prepareStateDirs([
      { path: rootDir, what: 'the root directory (rootDir)', flag: '--root-dir' },
      { path: config.podLogsDir, what: 'the pod log directory (podLogsDir)', flag: '--pod-logs-dir' },
      ...(config.containerLogsDir
        ? [{ path: config.containerLogsDir, what: 'the container log directory (containerLogsDir)', flag: '--container-logs-dir' }]
        : []),
    ]);

    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    nodeNameMetric(registry, config.nodeName);

    // Credentials first (TLS bootstrap may have to wait for a signed certificate), as upstream's run().
    const cluster = config.kubeconfig
      ? await connectCluster(config, {
          clock,
          logger: logger.child({ component: 'apiserver' }),
          registry,
          signal,
          version: packageVersion(),
        })
      : undefined;
    if (cluster) stops.push(() => cluster.clients.close());
    const recorder = new Recorder({
      component: 'kubelet',
      host: config.nodeName,
      logger: logger.child({ component: 'events' }),
      now: () => clock.now(),
      sink: cluster?.events,
    });
    recorder.record(nodeReference(config.nodeName), 'Normal', 'Starting', 'Starting kubelet.');

    let runtimeEndpoint = config.containerRuntimeEndpoint;
    let imageEndpoint = config.imageServiceEndpoint;
    if (runtimeEndpoint === 'sim') {
      const sim: EmbeddedSim = await startEmbeddedSim(rootDir, clock, logger.child({ component: 'sim' }));
      stops.push(() => sim.stop());
      runtimeEndpoint = sim.endpoint;
      if (imageEndpoint === 'sim') imageEndpoint = sim.endpoint;
    }

    const shared = createSharedState({ maxPods: config.maxPods, imagePulls: imagePullLimits(config), nowMs: clock.now() });
    registerMetricBlock(registry, shared.metrics, HELP);

    const cri = new CriClient({
      runtimeEndpoint,
      imageEndpoint,
      timeoutMs: config.runtimeRequestTimeout,
      observer: sharedRuntimeObserver(shared.metrics),
    });
    stops.push(() => cri.close());
    const runtimeVersion = await waitForRuntime(cri, clock, logger.child({ component: 'runtime' }), signal);

    const workerInit = shared.workerInit(runtimeEndpoint, { imageEndpoint, timeoutMs: config.runtimeRequestTimeout });
    const runner = createTaskRunner(workerInit, config.workerThreads);
    stops.push(() => runner.close());
    logger.info(
      {
        version: packageVersion(),
        runtime: `${runtimeVersion.runtimeName} ${runtimeVersion.runtimeVersion}`,
        runtimeEndpoint: config.containerRuntimeEndpoint,
        workerThreads: runner.threads,
        mode: config.kubeconfig ? 'cluster' : 'standalone',
        pleg: config.pleg,
        ...configSummary(config, options.sources ?? {}),
      },
      'Starting kubelet-ts',
    );

    const queue = new SyncLoopQueue();
    const plegMetricSet = plegMetrics(registry);
    const plegSink = (e: PlegEvent) => queue.offerPleg(e);
    const plegLogger = logger.child({ component: 'pleg' });
    const genericPleg = new GenericPleg({
      runner,
      cache: shared.cache,
      records: shared.records,
      clock,
      logger: plegLogger,
      metrics: plegMetricSet,
      mode: config.relistMode,
      sink: plegSink,
      // A relist can clear "PLEG is not healthy" for the syncLoop waiting on runtimeErrors().
      onRelist: () => runtimeState.changed(),
      // Syncs waiting for a status newer than their previous sync check the cache again.
      onCacheUpdated: () => syncer.cacheUpdated(),
    });
    const pleg: PodLifecycleEventGenerator =
      config.pleg === 'evented'
        ? new EventedPleg({
            generic: genericPleg,
            source: config.workerThreads === 0 ? new InlineContainerEventSource(workerInit) : new WorkerContainerEventSource(workerInit),
            eventedMetrics: eventedPlegMetrics(registry),
          })
        : genericPleg;
    const runtimeState = new RuntimeState(cri, pleg, clock, logger.child({ component: 'runtime' }));

    const hostname = (config.hostnameOverride || os.hostname()).trim().toLowerCase();
    const imageList = new ImageListCache(cri, clock, logger.child({ component: 'node-status' }));
    const collector = new NodeStatusInputsCollector({
      config,
      hostname,
      host: linuxHostProbe,
      cri,
      imageList,
      readiness: runtimeState,
      kubeletVersion: kubeletVersion(),
      clock,
      logger: logger.child({ component: 'node-status' }),
    });
    const addresses = await collector.refreshAddresses().catch((err: unknown) => {
      logger.error({ err: (err as Error).message }, 'Cannot determine the node IP; pods report no hostIP until it resolves');
      return [];
    });

    const podConfig = new PodConfig({ clock, logger: logger.child({ component: 'config' }), signal });
    addStaticSources(podConfig, config, { clock, logger, registry });

    const node = nodeResources(config, collector.machine, collector.resources().allocatable, addresses, hostname);

    // Volumes (issue 9): plugins, the volume manager (with what an earlier run left on disk) and pod-directory housekeeping.
    const volumes = await startVolumeStack({
      rootDir,
      nodeAllocatable: node.allocatable,
      recorder,
      registry,
      clock,
      logger: logger.child({ component: 'volumes' }),
      signal,
      client: cluster?.clients.main,
    });
    stops.push(() => volumes.idle());

    const podManager = new PodManager();
    const statusManager = new StatusManager(() => clock.now(), { logger: logger.child({ component: 'status' }), podManager });
    const startMetrics = new PodStartMetrics(registry);
    const podCidr = startPodCidr(cri, config.podCIDR, logger.child({ component: 'runtime' }));
    const clusterNode =
      cluster &&
      makeClusterNode({ config, connection: cluster, collector, runtimeState, podCidr, recorder, hostname, clock, logger, signal });
    const mirrorClient =
      clusterNode &&
      new MirrorClient({
        client: cluster.clients.main,
        nodeName: config.nodeName,
        node: () => clusterNode.status.node,
        logger: logger.child({ component: 'mirror-pods' }),
      });
    if (clusterNode) {
      podConfig.addSource(
        new ApiSource({
          client: cluster.clients.main,
          nodeName: config.nodeName,
          clock,
          logger: logger.child({ component: 'api-source' }),
          ready: () => clusterNode.status.whenRegistered(),
        }),
      );
    }
    const kubeletLogger = logger.child({ component: 'kubelet' });
    // Service environment variables: one reflector over every namespace's services, as upstream's service lister.
    const serviceLister =
      cluster && new ServiceLister({ client: cluster.clients.main, clock, logger: logger.child({ component: 'services' }) });
    serviceLister?.start(signal);
    // Probes (prober/): the host runs on its own thread and reads statuses from the shared cache.
    const prober = startProber({
      thread: runner.threads > 0,
      runtimeEndpoint,
      runtimeRequestTimeoutMs: config.runtimeRequestTimeout,
      cache: shared.cache,
      nodeIP: node.info.ip,
      clock,
      queue,
      recorder,
      podOf: (uid) => podManager.get(uid),
      logger: logger.child({ component: 'prober' }),
    });
    stops.push(() => prober.close());
    // cgroupsPerQOS: the QoS tiers now, each pod's cgroup before its sync, removals in housekeeping.
    const podCgroups = await setupPodCgroups(config, {
      simulated: runtimeVersion.runtimeName === SIM_RUNTIME_NAME,
      capacity: { cpu: collector.resources().capacity.cpu ?? '0', memory: collector.resources().capacity.memory ?? '0' },
      // upstream filterOutTerminatedPods: a pod whose status is Succeeded or Failed no longer counts.
      activePods: () =>
        podManager.pods().filter((p) => !/^(Succeeded|Failed)$/.test(statusManager.getPodStatus(p.metadata.uid ?? '')?.phase ?? '')),
      runtimeInfo: async () => (await cri.status({ verbose: true }).catch(() => undefined))?.info,
      clock,
      logger: kubeletLogger.child({ component: 'cgroups' }),
    });
    if (podCgroups) stops.push(() => podCgroups.idle());
    const syncer = new PoolSyncer({
      runner,
      cache: shared.cache,
      podManager,
      statusManager,
      node: node.info,
      clock,
      logger: kubeletLogger,
      recorder,
      networkError: () => runtimeState.networkErrors(),
      runtimeName: runtimeName(runtimeVersion.runtimeName),
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
      ...(serviceLister && { serviceEnv: serviceLister }),
      ...(podCgroups && { podCgroups }),
    });
    const podWorkers = new PodWorkers({
      syncer,
      clock,
      resyncIntervalMs: config.syncFrequency,
      podStatus: (uid) => syncer.cachedStatus(uid),
      logger: kubeletLogger.child({ component: 'pod-workers' }),
    });
    const containerDeletor = new ContainerDeletor(runner, kubeletLogger, config.containerLogsDir);
    const handlers = new PodHandlers({
      podManager,
      podWorkers,
      statusManager,
      admitNode: {
        allocatable: node.allocatable,
        name: config.nodeName,
        labels: node.labels,
        sysctlAllowlist: node.sysctlAllowlist,
        shuttingDown: () => signal.aborted,
      },
      runtimeUids: () => shared.cache.uids(),
      cachedStatus: (uid) => syncer.cachedStatus(uid),
      containerDeletor,
      // upstream kl.sourcesReady: every source has delivered, and the syncLoop has handled what it delivered.
      allSourcesReady: (): boolean => syncLoop.sourcesReady(),
      mirrorClient,
      startMetrics,
      cleanupPodDirs: (isActive) => volumes.housekeeping(isActive),
      ...(podCgroups && { cleanupPodCgroups: (keep: (uid: string) => boolean) => podCgroups.cleanup(keep) }),
      prober,
      clock,
      logger: kubeletLogger,
    });
    const syncLoop = new SyncLoop({
      podConfig,
      handlers,
      podWorkers,
      podManager,
      statusManager,
      runtimeState,
      clock,
      logger: kubeletLogger,
      queue,
      syncFrequencyMs: config.syncFrequency,
    });

    // Start-up order as upstream's startKubelet + Kubelet.Run: the HTTP servers, node status and
    // lease, runtime health, (pod status), the PLEG, then the syncLoop. As upstream's ListenAndServe
    // goroutines, the servers come up beside the rest: the PLEG and the syncLoop do not wait for the
    // serving certificate (an RSA key is generated when none is on disk); a server that cannot start
    // still fails the start-up.
    // Upstream's healthz checks. PLEG health is not one of them: it stops the syncLoop (runtimeErrors) instead.
    const logHealth = new LogHealth(logger, clock);
    logHealth.start(signal);
    const checks: HealthCheck[] = [
      { name: 'ping', check: () => ({ ok: true, message: 'ok' }) },
      { name: 'log', check: () => logHealth.check() },
      { name: 'syncloop', check: () => syncLoop.healthy() },
    ];
    const onHealthFailure = (name: string, reason: string) => logger.warn({ check: name, reason }, 'healthz check failed');
    const healthz =
      config.healthzPort > 0
        ? startHealthzServerRetrying({
            host: config.healthzBindAddress,
            port: config.healthzPort,
            checks,
            onFailure: onHealthFailure,
            clock,
            logger,
            signal,
          })
        : undefined;
    if (healthz) stops.push(() => healthz.close());
    // The kubelet server (HTTPS, authn/authz) and the read-only server (server/).
    const serversStarting = startKubeletServers({
      config,
      hostname,
      registry,
      checks,
      onHealthFailure,
      pods: () => syncLoop.podList(),
      runtimeStatuses: () => shared.cache.uids().flatMap((uid) => syncer.cachedStatus(uid) ?? []),
      probeMetrics: () => prober.metricsText(),
      runner,
      host: linuxHostProbe,
      cri,
      podManager,
      statusManager,
      apiserver: cluster?.clients.main,
      clock,
      logger: logger.child({ component: 'server' }),
      debug: {
        verbosity: () => verbosityOf(logger),
        setVerbosity: (level) => {
          setVerbosity(logger, level);
          logger.info({ verbosity: level }, 'Changed the log verbosity');
        },
        workerCount: () => (runner instanceof PoolRunner ? runner.workers().length : 0),
        workerHeapSnapshot: (i) => (runner instanceof PoolRunner ? runner.workers()[i]?.getHeapSnapshot() : undefined),
        sleep: (ms, s) => clock.sleep(ms, s),
      },
    });
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
    stops.push(() => logManager.idle());

    if (clusterNode) {
      clusterNode.start();
      const statusSync = new StatusSync({
        client: cluster.clients.main,
        statusManager,
        podManager,
        clock,
        logger: logger.child({ component: 'status-sync' }),
        syncDuration: podStatusSyncDuration(registry),
      });
      statusSync.start(signal);
    }
    runtimeState.start(signal);
    pleg.start(signal);
    stops.push(() => pleg.stopped());
    syncLoop.start(signal);
    stops.push(() => syncLoop.stopped());
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
    stops.push(() => podWorkers.idle());
    stops.push(() => containerDeletor.idle());
    const containerGc = new ContainerGc({
      runner,
      clock,
      logger: kubeletLogger.child({ component: 'container-gc' }),
      podLogsDir: config.podLogsDir,
      containerLogsDir: config.containerLogsDir,
      shouldPodContentBeRemoved: (uid) => podWorkers.shouldPodContentBeRemoved(uid),
      allSourcesReady: (): boolean => syncLoop.sourcesReady(),
    });
    containerGc.start(signal);
    stops.push(() => containerGc.idle());
    const imageGc = createImageGc({ config, cri, imageList, host: linuxHostProbe, clock, logger: kubeletLogger, recorder });
    imageGc.start(signal);
    stops.push(() => imageGc.idle());
    const servers = await serversStarting;
    for (const server of [servers.main, servers.readOnly]) {
      if (!server) continue;
      stops.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    }
    logger.info(
      {
        port: servers.main ? boundPort(servers.main) : 0,
        readOnlyPort: servers.readOnly ? boundPort(servers.readOnly) : 0,
        healthzPort: config.healthzPort,
        rootDir,
        podLogsDir: join(config.podLogsDir),
        mode: cluster ? 'cluster' : 'standalone',
      },
      'kubelet-ts is running',
    );

    return {
      port: servers.main ? boundPort(servers.main) : 0,
      readOnlyPort: servers.readOnly ? boundPort(servers.readOnly) : 0,
      healthzPort: config.healthzPort,
      runtimeEndpoint,
      registry,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
