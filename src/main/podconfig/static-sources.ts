/**
 * The two static pod sources a config enables: the manifest directory
 * (`staticPodPath`) and the manifest URL (`staticPodURL`), added to PodConfig
 * in upstream's order. The apiserver source is added once the node registers.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../../common/clock.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { FileSource } from './file-source.js';
import { HttpSource } from './http-source.js';
import type { PodConfig } from './pod-config.js';

export function addStaticSources(
  podConfig: PodConfig,
  config: Pick<
    KubeletConfig,
    'staticPodPath' | 'staticPodURL' | 'staticPodURLHeader' | 'nodeName' | 'fileCheckFrequency' | 'httpCheckFrequency'
  >,
  deps: { clock: Clock; logger: Logger; registry: Registry },
): void {
  const { clock, logger, registry } = deps;
  if (config.staticPodPath) {
    podConfig.addSource(
      new FileSource({
        path: resolve(config.staticPodPath),
        nodeName: config.nodeName,
        clock,
        logger: logger.child({ component: 'file-source' }),
        registry,
        checkFrequencyMs: config.fileCheckFrequency,
      }),
    );
  }
  if (config.staticPodURL) {
    podConfig.addSource(
      new HttpSource({
        url: config.staticPodURL,
        headers: config.staticPodURLHeader,
        nodeName: config.nodeName,
        clock,
        logger: logger.child({ component: 'http-source' }),
        registry,
        checkFrequencyMs: config.httpCheckFrequency,
      }),
    );
  }
}
