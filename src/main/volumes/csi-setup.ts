/**
 * Cluster mode's CSI stack: the CSI volume plugin, its driver registry and
 * the plugin watcher on <rootDir>/plugins_registry. volume-setup.ts imports
 * this module only when there is an apiserver client, so a standalone agent
 * never loads the CSI and plugin-registration gRPC code.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../../common/error-message.js';
import { PLUGINS_DIR_NAME } from '../../pod/pod-dirs.js';
import { isNotFound, type RestClient } from '../apiserver/rest-client.js';
import { dialRegistration } from '../plugins/registration-client.js';
import { PLUGINS_REGISTRY_DIR_NAME, PluginWatcher } from '../plugins/plugin-watcher.js';
import { grpcCsiClient } from './csi/csi-client.js';
import { CSI_PLUGIN_TYPE, CsiDriverRegistry } from './csi/csi-drivers.js';
import { ApiNodeInfoManager } from './csi/node-info.js';
import { csiPlugin } from './csi-plugin.js';
import type { VolumeStackOptions } from './volume-setup.js';
import type { VolumePlugin } from './volume-plugin.js';

/** The get of an object that yields undefined for a 404. */
async function getOptional<T>(client: Pick<RestClient, 'get'>, path: string): Promise<T | undefined> {
  try {
    return await client.get<T>(path);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Cluster mode: the CSI plugin, its driver registry and the plugin watcher
 * on <rootDir>/plugins_registry (stopped with the agent).
 */
export async function startCsi(options: VolumeStackOptions, client: NonNullable<VolumeStackOptions['client']>): Promise<VolumePlugin> {
  const logger = options.logger.child({ component: 'csi' });
  const drivers = new CsiDriverRegistry({
    clients: (endpoint) => grpcCsiClient(endpoint),
    nodeInfo: new ApiNodeInfoManager(client, options.nodeName),
    logger,
  });
  const watcher = new PluginWatcher({
    dir: join(options.rootDir, PLUGINS_REGISTRY_DIR_NAME),
    handlers: { [CSI_PLUGIN_TYPE]: drivers },
    dial: dialRegistration,
    clock: options.clock,
    logger: options.logger.child({ component: 'plugin-watcher' }),
  });
  await mkdir(join(options.rootDir, PLUGINS_DIR_NAME), { recursive: true, mode: 0o750 });
  (options.nodeRegistered?.() ?? Promise.resolve())
    .then(() => (options.signal.aborted ? undefined : watcher.start()))
    .catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'The plugin watcher did not start'));
  options.signal.addEventListener(
    'abort',
    () => {
      watcher.stop().catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'The plugin watcher did not stop cleanly'));
    },
    { once: true },
  );
  return csiPlugin({
    nodeName: options.nodeName,
    client: (name) => drivers.client(name),
    csiDriver: (name) => getOptional(client, `/apis/storage.k8s.io/v1/csidrivers/${encodeURIComponent(name)}`),
    volumeAttachment: (name) => getOptional(client, `/apis/storage.k8s.io/v1/volumeattachments/${encodeURIComponent(name)}`),
  });
}
