/**
 * Starts the node agent from a resolved configuration: the start-up phases
 * in upstream's order (startup/), each building its parts and registering
 * the step that stops them in one ordered shutdown list.
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { realClock, type Clock } from '../common/clock.js';
import { Late } from '../common/late.js';
import type { KubeletConfig } from './config/kubelet-config.js';
import type { ConfigSources } from './config/load-config.js';
import type { EvictionManager } from './eviction/eviction-manager.js';
import type { PoolSyncer } from './kubelet/pool-syncer.js';
import { prepareBase } from './startup/base.js';
import type { AgentContext } from './startup/context.js';
import { buildKubelet } from './startup/kubelet.js';
import { startLoops } from './startup/loops.js';
import { buildNode } from './startup/node.js';
import { buildPleg } from './startup/pleg.js';
import { startRuntime } from './startup/runtime.js';
import { startServers } from './startup/servers.js';
import { Shutdown } from './startup/shutdown.js';
import { buildSources } from './startup/sources.js';

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

export async function startAgent(config: KubeletConfig, logger: Logger, options: AgentOptions = {}): Promise<AgentHandle> {
  const controller = new AbortController();
  // Every loop of the agent waits on this one signal (timers, requests, streams).
  setMaxListeners(1000, controller.signal);
  const shutdown = new Shutdown();
  const ctx: AgentContext = { config, logger, clock: options.clock ?? realClock, signal: controller.signal, shutdown };
  const stop = async () => {
    controller.abort();
    await shutdown.run();
  };
  try {
    // Credentials first (TLS bootstrap may have to wait for a signed certificate), as upstream's run().
    const base = await prepareBase(ctx);
    const runtime = await startRuntime(ctx, base, options.sources ?? {});
    const syncerRef = new Late<PoolSyncer>('the pod syncer');
    const pleg = buildPleg(ctx, { ...base, ...runtime }, syncerRef);
    // The eviction manager starts with the loops; node status and admission ask it from the start.
    const eviction: { manager?: EvictionManager } = {};
    // The volume manager is built with the kubelet; node status asks it for status.volumesInUse from then on.
    const volumes: { inUse?: () => string[] } = {};
    const node = await buildNode(ctx, { ...base, ...runtime, runtimeState: pleg.runtimeState, eviction, volumes });
    const sources = buildSources(ctx, { ...base, clusterNode: node.clusterNode });
    const kubelet = await buildKubelet(ctx, { ...base, ...runtime, pleg, node, sources, syncerRef, eviction, volumes });
    // upstream startKubelet + Kubelet.Run: the servers beside the rest, node status and lease,
    // runtime health, pod status, the PLEG, then the syncLoop.
    const servers = startServers(ctx, { ...base, ...runtime, hostname: node.hostname, kubelet });
    startLoops(ctx, { ...base, ...runtime, pleg, node, kubelet, eviction });
    const { port, readOnlyPort } = await servers.listening();
    logger.info(
      {
        port,
        readOnlyPort,
        healthzPort: config.healthzPort,
        rootDir: base.rootDir,
        podLogsDir: join(config.podLogsDir),
        mode: base.cluster ? 'cluster' : 'standalone',
      },
      'kubelet-ts is running',
    );
    return { port, readOnlyPort, healthzPort: config.healthzPort, runtimeEndpoint: runtime.runtimeEndpoint, registry: base.registry, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
