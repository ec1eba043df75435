/**
 * The node's pod CIDR, passed to the runtime (upstream kubelet_network.go
 * updatePodCIDR and kuberuntime UpdatePodCIDR): CRI UpdateRuntimeConfig with
 * the CIDRs joined by ",", only when they differ from the last ones the
 * runtime accepted. Sources: --pod-cidr at start, then node.spec.podCIDRs on
 * every node status update (the node IPAM controller sets them). A runtime
 * whose CNI configuration is a template (containerd's `conf_template`) writes
 * its network configuration from it, and its network becomes ready.
 *
 * Calls are serialized (upstream updatePodCIDRMux). Main thread.
 */
import type { Logger } from 'pino';
import type { CriClient } from '../../cri/client.js';
import { errorMessage } from '../../common/error-message.js';

export class PodCidr {
  private current = '';
  private pending: Promise<boolean> = Promise.resolve(false);

  constructor(
    private readonly cri: Pick<CriClient, 'updateRuntimeConfig'>,
    private readonly logger: Logger,
  ) {}

  /** The CIDRs the runtime last accepted ('' before any). */
  get cidr(): string {
    return this.current;
  }

  /**
   * Sends `cidr` to the runtime if it differs from the current one. Resolves true when it differed (even if
   * the runtime refused it: the caller then reports the node status anyway, as upstream), false when not.
   * A refusal rejects, after which the next call tries again.
   */
  update(cidr: string): Promise<boolean> {
    const run = this.pending.then(
      () => this.apply(cidr),
      () => this.apply(cidr),
    );
    this.pending = run.catch(() => true);
    return run;
  }

  private async apply(cidr: string): Promise<boolean> {
    if (cidr === this.current) return false;
    this.logger.info({ podCIDR: cidr }, 'Updating runtime config through CRI with the pod CIDR');
    try {
      await this.cri.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: cidr } } });
    } catch (err) {
      throw new Error(`failed to update pod CIDR: ${errorMessage(err)}`, { cause: err });
    }
    this.logger.info({ from: this.current, to: cidr }, 'Setting Pod CIDR');
    this.current = cidr;
    return true;
  }
}

/** The pod CIDR updater with --pod-cidr applied at start (upstream NewMainKubelet; '' changes nothing). */
export function startPodCidr(cri: Pick<CriClient, 'updateRuntimeConfig'>, configured: string, logger: Logger): PodCidr {
  const podCidr = new PodCidr(cri, logger);
  podCidr.update(configured).catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'Pod CIDR update failed'));
  return podCidr;
}
