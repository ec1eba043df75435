/**
 * The CSI drivers registered on this node (upstream csi_drivers_store.go and
 * the CSI plugin's RegistrationHandler): the plugin watcher hands over each
 * plugin of type "CSIPlugin"; it is validated (a 1.x version), stored, asked
 * for NodeGetInfo, and installed in the node's CSINode object; a plugin whose
 * socket goes is removed from both.
 *
 * Contracts:
 *  - A driver is usable (get) only once registration completed; a failure
 *    at any step leaves it unregistered and rejects with upstream's message.
 *  - A driver registering again must report a higher version than the one
 *    registered, as upstream (the watcher deregisters a replaced socket first).
 */
import type { Logger } from 'pino';
import { errorMessage } from '../../../common/error-message.js';
import type { PluginHandler } from '../../plugins/plugin-watcher.js';
import type { CsiClientFactory, CsiNodeClient } from './csi-client.js';
import type { NodeInfoManager } from './node-info.js';

/** upstream csi plugin's type in pluginregistration (registerapi.CSIPlugin). */
export const CSI_PLUGIN_TYPE = 'CSIPlugin';

export interface CsiDriver {
  name: string;
  endpoint: string;
  /** [major, minor, patch] of the highest supported version. */
  version: number[];
}

/** Parses "1", "v1.2", "1.2.3" (upstream utilversion.ParseGeneric); undefined when not a version. */
export function parseVersion(s: string): number[] | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(s.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
}

function less(a: number[], b: number[]): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

/** upstream highestSupportedVersion: the highest version of major 1 or less, which must be 1.x. */
export function highestSupportedVersion(versions: readonly string[]): number[] {
  if (versions.length === 0) throw new Error('CSI driver reporting empty array for supported versions');
  let best: number[] | undefined;
  let bad: string | undefined;
  for (const s of versions) {
    const v = parseVersion(s);
    if (!v) {
      bad = `could not parse ${JSON.stringify(s)} as a version`;
      continue;
    }
    if (v[0] > 1) continue;
    if (!best || less(best, v)) best = v;
  }
  if (!best) {
    throw new Error(
      `could not find a highest supported version from versions (${versions.join(' ')}) reported by this driver: ${bad ?? '<nil>'}`,
    );
  }
  if (best[0] !== 1) throw new Error(`highest supported version reported by driver is ${best.join('.')}, must be v1.x`);
  return best;
}

export interface CsiDriverRegistryOptions {
  clients: CsiClientFactory;
  nodeInfo: NodeInfoManager;
  logger: Logger;
}

export class CsiDriverRegistry implements PluginHandler {
  private readonly drivers = new Map<string, CsiDriver>();

  constructor(private readonly options: Readonly<CsiDriverRegistryOptions>) {}

  /** A client for a registered driver; rejects with upstream's message when it is not registered. */
  client(name: string): CsiNodeClient {
    const d = this.drivers.get(name);
    if (!d) throw new Error(`driver name ${name} not found in the list of registered CSI drivers`);
    return this.options.clients(d.endpoint);
  }

  names(): string[] {
    return [...this.drivers.keys()].sort();
  }

  private validateVersions(caller: string, name: string, versions: readonly string[]): number[] {
    if (versions.length === 0)
      throw new Error(`${caller} for CSI driver "${name}" failed. Plugin returned an empty list for supported versions`);
    let v: number[];
    try {
      v = highestSupportedVersion(versions);
    } catch (err) {
      throw new Error(
        `${caller} for CSI driver "${name}" failed. None of the versions specified ${JSON.stringify(versions)} are supported. err=${errorMessage(err)}`,
        { cause: err },
      );
    }
    const existing = this.drivers.get(name);
    if (existing && !less(existing.version, v)) {
      throw new Error(
        `${caller} for CSI driver "${name}" failed. Another driver with the same name is already registered with a higher supported version: "${existing.version.join('.')}"`,
      );
    }
    return v;
  }

  validatePlugin(name: string, endpoint: string, versions: readonly string[]): void {
    this.options.logger.info({ driver: name, endpoint, versions }, 'Trying to validate a new CSI Driver');
    try {
      this.validateVersions('ValidatePlugin', name, versions);
    } catch (err) {
      throw new Error(`validation failed for CSI Driver ${name} at endpoint ${endpoint}: ${errorMessage(err)}`, { cause: err });
    }
  }

  async registerPlugin(name: string, endpoint: string, versions: readonly string[]): Promise<void> {
    this.options.logger.info({ driver: name, endpoint }, 'Register new CSI plugin');
    const version = this.validateVersions('RegisterPlugin', name, versions);
    this.drivers.set(name, { name, endpoint, version });
    const client = this.options.clients(endpoint);
    try {
      const info = await client.nodeGetInfo();
      await this.options.nodeInfo.installDriver(name, info.nodeId, info.maxVolumesPerNode, info.topology);
    } catch (err) {
      this.drivers.delete(name);
      throw err;
    } finally {
      client.close();
    }
  }

  async deRegisterPlugin(name: string): Promise<void> {
    this.options.logger.info({ driver: name }, 'DeRegisterPlugin request for CSI plugin');
    this.drivers.delete(name);
    await this.options.nodeInfo
      .uninstallDriver(name)
      .catch((err: unknown) =>
        this.options.logger.error(
          { driver: name, err: errorMessage(err) },
          'DeRegisterPlugin failed to remove the driver from the node info',
        ),
      );
  }
}
