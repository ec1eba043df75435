/**
 * The agent's apiserver clients, as upstream's kubelet builds them
 * (cmd/kubelet/app/server.go buildKubeletClientConfig / makeEventRecorder):
 * - `main`: pods, nodes, CSRs... rate limited by kubeAPIQPS / kubeAPIBurst;
 * - `heartbeat`: the node lease and node status, not rate limited and with a
 *   timeout of nodeLeaseDurationSeconds, so a burst of pod status writes never
 *   delays the proof of life;
 * - `events`: limited by eventRecordQPS / eventBurst (0 qps = unlimited).
 * TLS bootstrap runs first when --bootstrap-kubeconfig is set.
 */
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../../common/clock.js';
import { TokenBucket } from '../../common/token-bucket.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import { restClientMetrics } from './client-metrics.js';
import { RestClient, type RestClientObserver } from './rest-client.js';
import { loadClientCertificate, loadKubeConfig } from './tls-bootstrap.js';

export interface ApiClients {
  main: RestClient;
  heartbeat: RestClient;
  events: RestClient;
  close(): void;
}

/** Default per-request deadline of the main and event clients. */
const REQUEST_TIMEOUT_MS = 60_000;

export function userAgent(version: string): string {
  return `kubelet-ts/v${version} (${process.platform}/${process.arch})`;
}

export interface ConnectOptions {
  clock: Clock;
  logger: Logger;
  registry: Registry;
  signal: AbortSignal;
  version: string;
}

/** Resolves the node's credentials (bootstrapping if configured) and builds the three clients. */
export async function connectApiserver(config: KubeletConfig, options: ConnectOptions): Promise<ApiClients> {
  const observer = restClientMetrics(options.registry);
  const make = (kc: KubeConfig, qps: number, burst: number, timeoutMs: number, obs?: RestClientObserver) =>
    new RestClient({
      kubeConfig: kc,
      clock: options.clock,
      limiter: new TokenBucket(qps, burst, options.clock),
      timeoutMs,
      userAgent: userAgent(options.version),
      observer: obs,
    });
  if (config.bootstrapKubeconfig) {
    await loadClientCertificate({
      kubeconfigPath: config.kubeconfig,
      bootstrapKubeconfigPath: config.bootstrapKubeconfig,
      certDir: config.certDir || join(config.rootDir, 'pki'),
      nodeName: config.nodeName,
      clock: options.clock,
      logger: options.logger,
      signal: options.signal,
      makeClient: (kc) => make(kc, 5, 10, REQUEST_TIMEOUT_MS, observer),
    });
  }
  const kc = loadKubeConfig(config.kubeconfig, '--kubeconfig');
  const clients = {
    // client-go: a QPS of 0 means its defaults (5 QPS, burst 10).
    main: make(kc, config.kubeAPIQPS || 5, config.kubeAPIQPS ? config.kubeAPIBurst : 10, REQUEST_TIMEOUT_MS, observer),
    heartbeat: make(kc, 0, 0, config.nodeLeaseDurationSeconds * 1000, observer),
    // eventRecordQPS 0: no limit (the KubeletConfiguration contract).
    events: make(kc, config.eventRecordQPS, config.eventBurst, REQUEST_TIMEOUT_MS, observer),
  };
  return {
    ...clients,
    close() {
      for (const c of Object.values(clients)) c.closeIdleConnections();
    },
  };
}
