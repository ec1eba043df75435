/**
 * Gathers what the node status setters need, each time the node status is
 * computed: addresses, host facts, capacity and allocatable, the runtime's
 * version (CRI Version, kept from the last answer while the runtime is down),
 * the image list (the image manager's, refreshed every 30 s, image-list-cache.ts;
 * largest first, capped at nodeStatusMaxImages),
 * the pressure conditions (the eviction manager's), and the errors that make the node NotReady.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { rfc3339 } from '../../common/time.js';
import type { CriClient } from '../../cri/client.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import type { HostProbe, MachineFacts } from '../host/host-probe.js';
import { hostAddressEnv, resolveNodeAddresses, type AddressEnv, type NodeAddress } from './node-address.js';
import { nodeAllocatable, nodeCapacity } from './node-resources-calc.js';
import type { NodeImage } from '../images/image-list-cache.js';
import type { NodeStatusInputs } from './node-status-setters.js';
import type { PressureCondition } from './pressure.js';
import { ImageListCache } from '../images/image-list-cache.js';
import { errorMessage } from '../../common/error-message.js';

export type StatusConfig = Pick<
  KubeletConfig,
  | 'nodeName'
  | 'nodeIp'
  | 'rootDir'
  | 'maxPods'
  | 'podsPerCore'
  | 'systemReserved'
  | 'kubeReserved'
  | 'evictionHard'
  | 'nodeStatusMaxImages'
  | 'port'
>;

export interface InputDeps {
  config: StatusConfig;
  /** The Hostname address (the OS hostname or --hostname-override). */
  hostname: string;
  host: HostProbe;
  cri: Pick<CriClient, 'version' | 'listImages' | 'imageFsInfo'>;
  readiness: { runtimeErrors(): string[]; networkErrors(): string | undefined };
  /** The pressure conditions the eviction manager reports now. */
  underPressure(condition: PressureCondition): boolean;
  kubeletVersion: string;
  clock: Clock;
  logger: Logger;
  addressEnv?: AddressEnv;
  /** The image list to share (with image GC); default: one of its own. */
  imageList?: ImageListCache;
  /** The volume manager's attachable volumes in use; undefined until it runs (the status keeps what it had). */
  volumesInUse?: () => string[] | undefined;
}

export class NodeStatusInputsCollector {
  readonly machine: MachineFacts;
  private runtimeVersion = '';
  private addresses: NodeAddress[] = [];
  private readonly imageList: ImageListCache;

  constructor(private readonly d: InputDeps) {
    this.machine = d.host.machine();
    this.imageList = d.imageList ?? new ImageListCache(d.cri, d.clock, d.logger);
  }

  /** Capacity and allocatable from the host now (also what admission checks pods against). */
  resources(): { capacity: Record<string, string>; allocatable: Record<string, string> } {
    let rootfs: bigint | undefined;
    try {
      rootfs = this.d.host.fsStats(this.d.config.rootDir).capacityBytes;
    } catch {
      rootfs = undefined;
    }
    const capacity = nodeCapacity({
      machine: this.machine,
      rootfsCapacityBytes: rootfs,
      maxPods: this.d.config.maxPods,
      podsPerCore: this.d.config.podsPerCore,
    });
    const allocatable = nodeAllocatable(capacity, {
      systemReserved: this.d.config.systemReserved,
      kubeReserved: this.d.config.kubeReserved,
      evictionHard: this.d.config.evictionHard,
    });
    return { capacity, allocatable };
  }

  /** The addresses resolved at the last collect (or start). */
  nodeAddresses(): NodeAddress[] {
    return this.addresses;
  }

  async refreshAddresses(): Promise<NodeAddress[]> {
    this.addresses = await resolveNodeAddresses(
      this.d.config.nodeIp,
      this.d.config.nodeName,
      this.d.hostname,
      this.d.addressEnv ?? hostAddressEnv,
    );
    return this.addresses;
  }

  private async containerRuntimeVersion(): Promise<string> {
    try {
      const v = await this.d.cri.version({}, { timeoutMs: 10_000 });
      this.runtimeVersion = `${v.runtimeName}://${v.runtimeVersion}`;
    } catch {
      // Keep the last version seen: the runtime being down shows in Ready, not here.
    }
    return this.runtimeVersion;
  }

  /** Starts the image list's periodic refresh (upstream imageManager.Start). */
  startImageRefresh(signal: AbortSignal): void {
    this.imageList.start(signal);
  }

  private async images(): Promise<NodeImage[]> {
    const sorted = await this.imageList.list();
    const max = this.d.config.nodeStatusMaxImages;
    return max > -1 ? sorted.slice(0, max) : sorted;
  }

  async collect(): Promise<NodeStatusInputs> {
    try {
      await this.refreshAddresses();
    } catch (err) {
      this.d.logger.error({ err: errorMessage(err) }, 'Failed to resolve the node addresses; keeping the previous ones');
    }
    const [containerRuntimeVersion, images] = await Promise.all([this.containerRuntimeVersion(), this.images()]);
    const network = this.d.readiness.networkErrors();
    return {
      now: rfc3339(this.d.clock.now()),
      addresses: this.addresses,
      machine: this.machine,
      ...this.resources(),
      containerRuntimeVersion,
      kubeletVersion: this.d.kubeletVersion,
      kubeletPort: this.d.config.port,
      images,
      underPressure: (c) => this.d.underPressure(c),
      readyErrors: [...this.d.readiness.runtimeErrors(), ...(network ? [network] : [])],
      volumesInUse: this.d.volumesInUse?.(),
    };
  }
}
