/** What the agent's start line says of its configuration. */
import { formatDuration } from '../../common/duration.js';
import type { KubeletConfig } from './kubelet-config.js';
import type { ConfigSources } from './load-config.js';

/** The pod sources of a config, as the start line names them. */
export function podSources(config: KubeletConfig): string[] {
  return [
    ...(config.staticPodPath ? [`file:${config.staticPodPath}`] : []),
    ...(config.staticPodURL ? [`http:${config.staticPodURL}`] : []),
    ...(config.kubeconfig ? ['api'] : []),
  ];
}

/** The settings an operator checks first, for the agent's start line. */
export function configSummary(config: KubeletConfig, sources: ConfigSources): Record<string, unknown> {
  const from = (source: string) =>
    Object.entries(sources)
      .filter(([, s]) => s === source)
      .map(([k]) => k);
  return {
    nodeName: config.nodeName,
    configFile: config.configFile || undefined,
    sources: podSources(config),
    maxPods: config.maxPods,
    syncFrequency: formatDuration(config.syncFrequency),
    relistMode: config.relistMode,
    fromFile: from('file'),
    fromFlags: from('flag'),
  };
}
