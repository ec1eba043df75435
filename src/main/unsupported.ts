/**
 * Settings that are accepted (they are upstream flags) but whose feature is
 * not built yet. Asking for one is an error with a clear message rather than
 * a silent standalone run; the read-only port only warns, since leaving a
 * legacy default unserved changes nothing a client relies on.
 */
import type { Logger } from 'pino';
import type { KubeletConfig } from './config/kubelet-config.js';

export function unsupportedSettings(config: KubeletConfig): string[] {
  const problems: string[] = [];
  if (config.kubeconfig) {
    problems.push(
      `--kubeconfig=${config.kubeconfig}: the apiserver pod source, node status and lease are not implemented yet; only standalone mode (static pods) runs`,
    );
  }
  if (config.runonce) problems.push('--runonce: run-once mode is not implemented yet');
  if (config.pleg === 'evented') problems.push('--pleg=evented: the evented PLEG is not implemented yet; use --pleg=generic');
  return problems;
}

export function warnIgnoredSettings(config: KubeletConfig, logger: Logger): void {
  if (config.readOnlyPort !== 0) {
    logger.warn({ readOnlyPort: config.readOnlyPort }, 'The read-only port is not served yet; use --read-only-port=0 to silence this');
  }
}
