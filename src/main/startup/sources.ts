/**
 * Start-up phase 5: where pods come from. The merged pod configuration with
 * the static sources (manifest directory and URL) and, in a cluster, the
 * apiserver source (it waits for the node's registration); the service
 * lister pods' service environment variables come from.
 */
import type { Registry } from 'prom-client';
import type { ClusterConnection, ClusterNode } from './cluster-node.js';
import { ServiceLister } from '../kubelet/service-env.js';
import { ApiSource } from '../podconfig/api-source.js';
import { PodConfig } from '../podconfig/pod-config.js';
import { addStaticSources } from '../podconfig/static-sources.js';
import type { AgentContext } from './context.js';

export interface AgentSources {
  podConfig: PodConfig;
  serviceLister: ServiceLister | undefined;
}

export function buildSources(
  ctx: AgentContext,
  parts: { registry: Registry; cluster: ClusterConnection | undefined; clusterNode: ClusterNode | undefined },
): AgentSources {
  const { config, clock, logger, signal } = ctx;
  const podConfig = new PodConfig({ clock, logger: logger.child({ component: 'config' }), signal });
  addStaticSources(podConfig, config, { clock, logger, registry: parts.registry });
  const { cluster, clusterNode } = parts;
  if (cluster && clusterNode) {
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
  // Service environment variables: one reflector over every namespace's services, as upstream's service lister.
  const serviceLister =
    cluster && new ServiceLister({ client: cluster.clients.main, clock, logger: logger.child({ component: 'services' }) });
  serviceLister?.start(signal);
  return { podConfig, serviceLister };
}
