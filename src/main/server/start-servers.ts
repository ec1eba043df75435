/**
 * Starts the kubelet server (HTTPS on address:port, when enableServer) and the
 * read-only server (plain HTTP on address:readOnlyPort, when non-zero) with
 * their handlers, TLS material, authentication and authorization, as upstream
 * startKubelet / ListenAndServe / ListenAndServeReadOnly.
 */
import type { DebugHost } from './debug-handlers.js';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Pod } from '../../api/pod.js';
import type { Clock } from '../../common/clock.js';
import { ConfigError } from '../../common/errors.js';
import { errorMessage } from '../../common/error-message.js';
import type { CriApi } from '../../cri/client.js';
import { ContainerState } from '../../gen/runtime/v1/api.js';
import { criStreamingHost } from './cri-streaming-host.js';
import type { PodStatus as RuntimePodStatus } from '../../runtime/types.js';
import type { TaskRunner } from '../../workers/task-runner.js';
import type { RestClient } from '../apiserver/rest-client.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import type { HealthCheck, HealthFailureLog } from '../http/server.js';
import type { PodManager } from '../podconfig/pod-manager.js';
import type { HostProbe } from '../host/host-probe.js';
import type { StatusManager } from '../status/status-manager.js';
import { apiAccessReviewer, apiTokenReviewer } from './api-reviews.js';
import { RequestAuthenticator } from './authenticator.js';
import { alwaysAllow, WebhookAuthorizer } from './authorizer.js';
import { configz } from './configz.js';
import { httpMetrics } from './http-metrics.js';
import { startKubeletServer, type ServerHandlers } from './kubelet-server.js';
import { runningPodList } from './running-pods.js';
import { loadServingCert } from './serving-cert.js';
import { StatsProvider, stringifyWithBigints } from './stats-provider.js';

export interface ServerDeps {
  config: KubeletConfig;
  hostname: string;
  registry: Registry;
  checks: HealthCheck[];
  /** Logs a failed /healthz check (the response withholds the reason). */
  onHealthFailure?: HealthFailureLog;
  pods(): unknown;
  /** Runtime statuses of every pod the runtime has (the shared cache). */
  runtimeStatuses(): Iterable<RuntimePodStatus>;
  /** One pod's runtime status as the last relist saw it (the pod status cache). */
  runtimeStatus?: (uid: string) => RuntimePodStatus | undefined;
  probeMetrics(): Promise<string>;
  runner: Pick<TaskRunner, 'run'>;
  host: HostProbe;
  cri: CriApi;
  podManager: PodManager;
  statusManager: StatusManager;
  /** The apiserver client (TokenReview / SubjectAccessReview); absent standalone. */
  apiserver?: Pick<RestClient, 'json'>;
  clock: Clock;
  logger: Logger;
  /** Served under /logs/ (default /var/log). */
  nodeLogDir?: string;
  /** /debug/flags/v and /debug/pprof. */
  debug?: DebugHost;
}

export interface KubeletServers {
  main?: Server;
  readOnly?: Server;
}

function readClientCA(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read authentication.x509.clientCAFile (--client-ca-file) ${path}: ${errorMessage(err)}`);
  }
}

export async function startKubeletServers(d: ServerDeps): Promise<KubeletServers> {
  const { config, clock, logger } = d;
  const stats = new StatsProvider({
    runner: d.runner,
    host: d.host,
    nodeName: config.nodeName,
    rootDir: config.rootDir,
    podLogsDir: config.podLogsDir,
    podOf: (uid) => d.podManager.get(uid),
    clock,
    startedAt: clock.now(),
  });
  const handlers: ServerHandlers = {
    registry: d.registry,
    checks: d.checks,
    ...(d.onHealthFailure && { onHealthFailure: d.onHealthFailure }),
    pods: () => d.pods(),
    runningPods: () => runningPodList(d.runtimeStatuses()),
    probeMetrics: () => d.probeMetrics(),
    resourceMetrics: () => stats.resourceMetrics(),
    statsSummary: async (onlyCpuAndMemory) => stringifyWithBigints(await stats.summary(onlyCpuAndMemory)),
    configz: () => configz(config),
    nodeLogDir: d.nodeLogDir ?? '/var/log',
    containerLogs: {
      clock,
      podByName: (namespace, name) => d.podManager.getByFullName(`${name}_${namespace}`),
      statusOf: (pod: Pod) => d.statusManager.getPodStatus(pod.metadata.uid ?? '') ?? pod.status,
      logPath: async (id) => (await d.cri.containerStatus({ containerId: id })).status?.logPath ?? '',
      isRunning: async (id) =>
        (await d.cri.containerStatus({ containerId: id }).catch(() => undefined))?.status?.state === ContainerState.CONTAINER_RUNNING,
    },
    streaming: criStreamingHost({
      cri: d.cri,
      podByName: (namespace, name) => d.podManager.getByFullName(`${name}_${namespace}`),
      ...(d.runtimeStatus && { cachedStatus: d.runtimeStatus }),
      logger,
    }),
  };
  const metrics = httpMetrics(d.registry);
  const out: KubeletServers = {};
  if (config.enableServer) {
    const cert = await loadServingCert({
      tlsCertFile: config.tlsCertFile,
      tlsPrivateKeyFile: config.tlsPrivateKeyFile,
      certDir: config.certDir || join(config.rootDir, 'pki'),
      hostname: d.hostname,
      nowMs: clock.now(),
    });
    if (cert.generated) logger.info({ certFile: cert.certFile, keyFile: cert.keyFile }, 'Generated a self-signed serving certificate');
    const authn = config.authentication;
    const authz = config.authorization;
    if ((authn.webhook.enabled || authz.mode === 'Webhook') && !d.apiserver) {
      throw new ConfigError('webhook authentication or authorization needs an apiserver client (--kubeconfig)');
    }
    const clientCA = authn.x509.clientCAFile ? readClientCA(authn.x509.clientCAFile) : undefined;
    const authenticator = new RequestAuthenticator({
      clock,
      anonymous: authn.anonymous.enabled,
      ...(authn.webhook.enabled && { tokens: { reviewer: apiTokenReviewer(d.apiserver!), cacheTTLMs: authn.webhook.cacheTTL } }),
    });
    const authorizer =
      authz.mode === 'Webhook'
        ? new WebhookAuthorizer({
            reviewer: apiAccessReviewer(d.apiserver!),
            clock,
            authorizedTTLMs: authz.webhook.cacheAuthorizedTTL,
            unauthorizedTTLMs: authz.webhook.cacheUnauthorizedTTL,
          })
        : alwaysAllow;
    out.main = await startKubeletServer({
      host: config.address,
      port: config.port,
      handlers,
      metrics,
      logger: logger.child({ server: 'readwrite' }),
      tls: { cert: cert.cert, key: cert.key, ...(clientCA && { clientCA }) },
      auth: { authenticator, authorizer, nodeName: config.nodeName },
      ...(d.debug && { debug: d.debug }),
      debugging: {
        handlers: config.enableDebuggingHandlers,
        systemLogs: config.enableSystemLogHandler,
        profiling: config.enableProfilingHandler,
        flags: config.enableDebugFlagsHandler,
      },
    });
    logger.info(
      {
        address: config.address,
        port: config.port,
        clientCA: authn.x509.clientCAFile || undefined,
        tokenWebhook: authn.webhook.enabled,
        anonymous: authn.anonymous.enabled,
        authorization: authz.mode,
      },
      'Started the kubelet server (HTTPS)',
    );
  }
  if (config.readOnlyPort > 0) {
    out.readOnly = await startKubeletServer({
      host: config.address,
      port: config.readOnlyPort,
      handlers,
      metrics,
      logger: logger.child({ server: 'readonly' }),
    });
    logger.info({ address: config.address, port: config.readOnlyPort }, 'Started the read-only server (HTTP, no authentication)');
  }
  return out;
}
