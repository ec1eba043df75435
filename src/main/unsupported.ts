/**
 * Start-time checks of setting combinations that config resolution cannot
 * make (they depend on the mode the agent starts in). Single settings are
 * honoured, explained or refused by the settings catalog
 * (config/settings-catalog.ts).
 */
import type { Logger } from 'pino';
import type { KubeletConfig } from './config/kubelet-config.js';
import { webhookClientProblems } from './config/server-config.js';

export function unsupportedSettings(config: KubeletConfig): string[] {
  const problems: string[] = [];
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
}
