/**
 * Start-up phase 1: the state directories, the metrics registry, the
 * apiserver credentials and clients (TLS bootstrap may wait for a signed
 * certificate, as upstream's run() does first), and the event recorder with
 * the node's Starting event.
 */
import { resolve } from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { connectCluster, type ClusterConnection } from './cluster-node.js';
import { nodeReference, Recorder } from '../events/event-recorder.js';
import { nodeNameMetric } from '../node/node-metrics.js';
import { prepareStateDirs } from './state-dirs.js';
import { packageVersion } from '../../common/version.js';
import type { AgentContext } from './context.js';

export interface AgentBase {
  rootDir: string;
  registry: Registry;
  /** Undefined for a standalone node (no kubeconfig). */
  cluster: ClusterConnection | undefined;
  recorder: Recorder;
}

export async function prepareBase(ctx: AgentContext): Promise<AgentBase> {
  const { config, clock, logger, signal } = ctx;
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

  const cluster = config.kubeconfig
    ? await connectCluster(config, {
        clock,
        logger: logger.child({ component: 'apiserver' }),
        registry,
        signal,
        version: packageVersion(),
      })
    : undefined;
  if (cluster) ctx.shutdown.add('apiserver clients', () => cluster.clients.close());
  const recorder = new Recorder({
    component: 'kubelet',
    host: config.nodeName,
    logger: logger.child({ component: 'events' }),
    now: () => clock.now(),
    sink: cluster?.events,
  });
  recorder.record(nodeReference(config.nodeName), 'Normal', 'Starting', 'Starting kubelet.');
  return { rootDir, registry, cluster, recorder };
}
