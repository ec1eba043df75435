/**
 * Start-up phase 7: the HTTP endpoints. The healthz server with upstream's
 * checks (PLEG health is not one of them: it stops the syncLoop through
 * runtimeErrors instead), the kubelet server (HTTPS, authn/authz) and the
 * read-only server. As upstream's ListenAndServe goroutines, they come up
 * beside the rest: the PLEG and the syncLoop do not wait for the serving
 * certificate; a server that cannot start still fails the start-up, when
 * listening() is awaited.
 */
import type { Registry } from 'prom-client';
import type { CriClient } from '../../cri/client.js';
import { setVerbosity, verbosityOf } from '../../common/logger.js';
import type { SharedState } from '../../shared/shared-state.js';
import { PoolRunner, type TaskRunner } from '../../workers/task-runner.js';
import type { ClusterConnection } from './cluster-node.js';
import { LogHealth } from '../http/log-health.js';
import { boundPort, startHealthzServerRetrying, type HealthCheck } from '../http/server.js';
import { linuxHostProbe } from '../host/host-probe.js';
import { startKubeletServers } from '../server/start-servers.js';
import type { AgentContext } from './context.js';
import type { AgentKubelet } from './kubelet.js';

export interface AgentServers {
  /** Resolves once the kubelet and read-only servers listen (rejects if one cannot); registers their shutdown. */
  listening(): Promise<{ port: number; readOnlyPort: number }>;
}

export function startServers(
  ctx: AgentContext,
  parts: {
    hostname: string;
    registry: Registry;
    cluster: ClusterConnection | undefined;
    cri: CriClient;
    shared: SharedState;
    runner: TaskRunner;
    kubelet: AgentKubelet;
  },
): AgentServers {
  const { config, clock, logger, signal, shutdown } = ctx;
  const { syncLoop, syncer, prober, podManager, statusManager } = parts.kubelet;
  const { runner, shared } = parts;
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
  if (healthz) shutdown.add('healthz server', () => healthz.close());
  const starting = startKubeletServers({
    config,
    hostname: parts.hostname,
    registry: parts.registry,
    checks,
    onHealthFailure,
    pods: () => syncLoop.podList(),
    runtimeStatuses: () => shared.cache.uids().flatMap((uid) => syncer.cachedStatus(uid) ?? []),
    runtimeStatus: (uid) => syncer.cachedStatus(uid),
    probeMetrics: () => prober.metricsText(),
    runner,
    host: linuxHostProbe,
    cri: parts.cri,
    podManager,
    statusManager,
    apiserver: parts.cluster?.clients.main,
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
  return {
    async listening() {
      const servers = await starting;
      for (const server of [servers.main, servers.readOnly]) {
        if (!server) continue;
        shutdown.add('kubelet server', () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
      }
      return {
        port: servers.main ? boundPort(servers.main) : 0,
        readOnlyPort: servers.readOnly ? boundPort(servers.readOnly) : 0,
      };
    },
  };
}
