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
  /** Cluster mode: configMaps, secrets, service-account tokens, claims and PVs come from this apiserver client. */
  client?: Pick<RestClient, 'get' | 'watch' | 'create'>;
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

export async function startVolumeStack(o: VolumeStackOptions): Promise<VolumeStack> {
  let objects: ObjectSource | undefined;
  let tokens: TokenSource | undefined;
  if (o.client) {
    objects = new ObjectCache({ client: o.client, clock: o.clock, logger: o.logger, signal: o.signal });
    const manager = new TokenManager({ client: o.client, clock: o.clock, logger: o.logger });
    manager.start(o.signal);
    tokens = manager;
  }
  let mounter = o.mounter;
  if (!mounter) {
    // Mount commands go through a small helper process: forking the agent itself would stall the main thread.
    const helper = new MountHelper();
    helper.start();
    o.signal.addEventListener('abort', () => helper.close(), { once: true });
    mounter = new LinuxMounter(helper.run);
  }
  const host: VolumeHost = {
    rootDir: o.rootDir,
    mounter,
    clock: o.clock,
    logger: o.logger,
    nodeAllocatable: o.nodeAllocatable,
    objects,
    tokens,
    claims: o.client ? apiClaimSource(o.client) : undefined,
    recorder: o.recorder,
  };
  const manager = new VolumeManager({
    host,
    plugins: volumePlugins(),
    recorder: o.recorder,
    metrics: volumeMetrics(o.registry),
    clock: o.clock,
    logger: o.logger,
  });
  o.signal.addEventListener('abort', () => manager.close(), { once: true });
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
          rootDir: o.rootDir,
          mounter: host.mounter,
          logger: o.logger,
          isActive,
          hasVolumes: (uid) => manager.hasVolumes(uid),
        });
      })()
        .catch((err: unknown) => o.logger.error({ err: errorMessage(err) }, 'Pod directory housekeeping failed'))
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
