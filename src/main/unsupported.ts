/**
 * Settings that are accepted (they are upstream flags) but whose feature is
 * not built yet, or whose upstream effect does not apply here. Asking for an
 * unbuilt feature is an error with a clear message; a setting that cannot
 * apply gets one startup line saying so.
 */
import type { Logger } from 'pino';
import type { KubeletConfig } from './config/kubelet-config.js';
import { webhookClientProblems } from './config/server-config.js';

export function unsupportedSettings(config: KubeletConfig): string[] {
  const problems: string[] = [];
  if (config.runonce) problems.push('--runonce: run-once mode is not implemented yet');
  problems.push(...webhookClientProblems(config));
  if (config.bootstrapKubeconfig && !config.kubeconfig) {
    problems.push('--bootstrap-kubeconfig needs --kubeconfig: the path where the bootstrapped kubeconfig is written');
  }
  return problems;
}

export function warnIgnoredSettings(config: KubeletConfig, logger: Logger): void {
  if (!config.kubeconfig && (config.registerWithTaints.length > 0 || Object.keys(config.nodeLabels).length > 0)) {
    logger.warn(
      '--node-labels and --register-with-taints apply when the node registers with an apiserver (--kubeconfig); standalone, they have no effect',
    );
  }
  logger.info(
    { evictionHard: config.evictionHard, evictionSoft: config.evictionSoft },
    'Eviction thresholds set the MemoryPressure, DiskPressure and PIDPressure node conditions; no pods are evicted (the eviction manager is not built)',
  );
}
