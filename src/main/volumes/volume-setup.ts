/**
 * The agent's volume stack: the plugins, the apiserver-backed sources of
 * configMaps, secrets, service-account tokens and PersistentVolumeClaims
 * (cluster mode only), the volume manager with the volumes an earlier run
 * left on disk, and the housekeeping of orphaned pod directories.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../../common/clock.js';
import { MountHelper } from '../../common/mount-helper.js';
import { LinuxMounter, type Mounter } from '../../common/mounter.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { downwardAPIPlugin } from './downward-api-plugin.js';
import { emptyDirPlugin } from './empty-dir-plugin.js';
import { hostPathPlugin } from './host-path-plugin.js';
import { cleanupOrphanedPodDirs } from './orphan-pod-dirs.js';
import { VolumeManager } from './volume-manager.js';
import { volumeMetrics } from './volume-metrics.js';
import type { ObjectSource, TokenSource, VolumeHost, VolumePlugin } from './volume-plugin.js';
import type { RestClient } from '../apiserver/rest-client.js';
import { ObjectCache } from './object-cache.js';
import { projectedPlugin } from './projected-plugin.js';
import { configMapPlugin, secretPlugin } from './object-volume-plugins.js';
import { TokenManager } from './token-manager.js';
import { apiClaimSource } from './claim-resolver.js';
import { localVolumePlugin } from './local-volume-plugin.js';
import { errorMessage } from '../../common/error-message.js';

export interface VolumeStackOptions {
  rootDir: string;
  nodeAllocatable: { cpu: string; memory: string };
  recorder: EventRecorder;
  registry: Registry;
  clock: Clock;
  logger: Logger;
  /**
   * Cluster mode: configMaps, secrets, service-account tokens, claims and PVs come from this apiserver client,
   * and CSI drivers register through <rootDir>/plugins_registry (their CSINode entries written with it).
   */
  client?: Pick<RestClient, 'get' | 'watch' | 'create' | 'replace' | 'patch'>;
  /** The node's name (CSINode, VolumeAttachment names). */
  nodeName: string;
  /** Resolves once the Node object exists: CSI drivers register after it (their CSINode is owned by the Node). */
  nodeRegistered?: () => Promise<void>;
  mounter?: Mounter;
  /** The agent's stop signal: waiting syncs are released when it aborts. */
  signal: AbortSignal;
}

export interface VolumeStack {
  manager: VolumeManager;
  /** Cluster mode: the watch-based cache of referenced ConfigMaps and Secrets (also used for env and pull secrets). */
  objects?: ObjectSource;
  /** Housekeeping: releases the volumes of pods that are gone, then removes orphaned pod directories. Never overlaps itself. */
  housekeeping(isActive: (uid: string) => boolean): void;
  /** Resolves when no housekeeping or volume operation runs. */
  idle(): Promise<void>;
}

export function volumePlugins(): VolumePlugin[] {
  return [emptyDirPlugin, hostPathPlugin, configMapPlugin, secretPlugin, downwardAPIPlugin, projectedPlugin, localVolumePlugin];
}

export async function startVolumeStack(options: VolumeStackOptions): Promise<VolumeStack> {
  let objects: ObjectSource | undefined;
  let tokens: TokenSource | undefined;
  if (options.client) {
    objects = new ObjectCache({ client: options.client, clock: options.clock, logger: options.logger, signal: options.signal });
    const manager = new TokenManager({ client: options.client, clock: options.clock, logger: options.logger });
    manager.start(options.signal);
    tokens = manager;
  }
  let mounter = options.mounter;
  if (!mounter) {
    // Mount commands go through a small helper process: forking the agent itself would stall the main thread.
    const helper = new MountHelper();
    helper.start();
    options.signal.addEventListener('abort', () => helper.close(), { once: true });
    mounter = new LinuxMounter(helper.run);
  }
  const host: VolumeHost = {
    rootDir: options.rootDir,
    mounter,
    clock: options.clock,
    logger: options.logger,
    nodeAllocatable: options.nodeAllocatable,
    objects,
    tokens,
    claims: options.client ? apiClaimSource(options.client) : undefined,
    recorder: options.recorder,
  };
  const manager = new VolumeManager({
    host,
    // The CSI stack (its gRPC code, ~0.2 MB of sources) is loaded only in cluster mode, where drivers can register.
    plugins: options.client
      ? [...volumePlugins(), await (await import('./csi-setup.js')).startCsi(options, options.client)]
      : volumePlugins(),
    recorder: options.recorder,
    metrics: volumeMetrics(options.registry),
    clock: options.clock,
    logger: options.logger,
  });
  options.signal.addEventListener('abort', () => manager.close(), { once: true });
  await manager.reconstruct();
  let running: Promise<void> | undefined;
  return {
    manager,
    objects,
    housekeeping(isActive) {
      if (running) return;
      running = (async () => {
        manager.releaseOrphans(isActive);
        await cleanupOrphanedPodDirs({
          rootDir: options.rootDir,
          mounter: host.mounter,
          logger: options.logger,
          isActive,
          hasVolumes: (uid) => manager.hasVolumes(uid),
        });
      })()
        .catch((err: unknown) => options.logger.error({ err: errorMessage(err) }, 'Pod directory housekeeping failed'))
        .finally(() => {
          running = undefined;
        });
    },
    async idle() {
      await running;
      await manager.idle();
    },
  };
}
