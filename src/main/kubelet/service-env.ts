/**
 * Service environment variables (upstream getServiceEnvVarMap and
 * envvars.FromServices): every container started in cluster mode gets
 * `<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT[_<PORT NAME>]` and the
 * Docker-link `<NAME>_PORT*` variables of
 * - the master service (`kubernetes` in namespace `default`), always;
 * - every service of the pod's own namespace when `enableServiceLinks` is
 *   true (the default).
 * Services without a cluster IP (headless, or not yet allocated) give none.
 *
 * The services come from one reflector over all namespaces, as upstream's
 * service lister. Until its first LIST completes `envFor` throws (newer
 * upstream's "services have not yet been read at least once"; v1.20.2 starts
 * such a container without the variables), so the sync fails and the pod
 * worker retries it rather than start a container with a partial environment.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { Reflector } from '../apiserver/reflector.js';
import type { RestClient } from '../apiserver/rest-client.js';

/** The fields of a v1 Service this reads. */
export interface ServiceLike {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
  spec?: { clusterIP?: string; ports?: { name?: string; port?: number; protocol?: string }[] };
}

const MASTER_NAMESPACE = 'default';
const MASTER_SERVICES = new Set(['kubernetes']);

/** Upstream makeEnvVariableName: upper case, '-' → '_'. */
const envName = (name: string) => name.toUpperCase().replaceAll('-', '_');

/** `ip:port`, with an IPv6 address in brackets (Go net.JoinHostPort). */
const hostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** Upstream IsServiceIPSet: a cluster IP that is neither empty nor "None". */
const hasClusterIP = (s: ServiceLike) => !!s.spec?.clusterIP && s.spec.clusterIP !== 'None';

/** envvars.FromServices, as a map (a later service's variable wins, as upstream's map does). */
export function serviceEnvVars(services: Iterable<ServiceLike>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of services) {
    const ports = s.spec?.ports ?? [];
    if (!hasClusterIP(s) || ports.length === 0) continue;
    const ip = s.spec!.clusterIP!;
    const prefix = envName(s.metadata?.name ?? '');
    env[`${prefix}_SERVICE_HOST`] = ip;
    const portVar = `${prefix}_SERVICE_PORT`;
    env[portVar] = String(ports[0].port ?? 0);
    for (const p of ports) if (p.name) env[`${portVar}_${envName(p.name)}`] = String(p.port ?? 0);
    ports.forEach((p, i) => {
      const port = p.port ?? 0;
      const protocol = p.protocol || 'TCP';
      const url = `${protocol.toLowerCase()}://${hostPort(ip, port)}`;
      if (i === 0) env[`${prefix}_PORT`] = url;
      const pp = `${prefix}_PORT_${port}_${protocol.toUpperCase()}`;
      env[pp] = url;
      env[`${pp}_PROTO`] = protocol.toLowerCase();
      env[`${pp}_PORT`] = String(port);
      env[`${pp}_ADDR`] = ip;
    });
  }
  return env;
}

/** The services whose variables a pod in `namespace` gets (upstream's projection onto the master services). */
export function servicesForPod(services: Iterable<ServiceLike>, namespace: string, enableServiceLinks: boolean): ServiceLike[] {
  const byName = new Map<string, ServiceLike>();
  for (const s of services) {
    if (!hasClusterIP(s)) continue;
    const name = s.metadata?.name ?? '';
    const ns = s.metadata?.namespace ?? '';
    if (ns === MASTER_NAMESPACE && MASTER_SERVICES.has(name)) {
      if (!byName.has(name)) byName.set(name, s);
    } else if (ns === namespace && enableServiceLinks) {
      byName.set(name, s);
    }
  }
  return [...byName.values()];
}

export interface ServiceEnvSource {
  /** The service variables for a pod; throws while the services have not been read yet. */
  envFor(namespace: string, enableServiceLinks: boolean): Record<string, string>;
}

/** The reflector-backed source (cluster mode). Results are memoized per namespace until the services change. */
export class ServiceLister implements ServiceEnvSource {
  private readonly reflector: Reflector<ServiceLike>;
  private readonly memo = new Map<string, Record<string, string>>();

  constructor(o: { client: Pick<RestClient, 'get' | 'watch'>; clock: Clock; logger: Logger }) {
    this.reflector = new Reflector<ServiceLike>({
      client: o.client,
      path: '/api/v1/services',
      clock: o.clock,
      logger: o.logger,
      what: 'Watching services',
      onSync: () => this.memo.clear(),
    });
  }

  start(signal: AbortSignal): void {
    this.reflector.run(signal).catch(() => undefined); // run() never rejects
  }

  envFor(namespace: string, enableServiceLinks: boolean): Record<string, string> {
    if (!this.reflector.synced) throw new Error('services have not yet been read at least once, cannot construct envvars');
    const key = `${enableServiceLinks ? '+' : '-'}${namespace}`;
    let env = this.memo.get(key);
    if (!env) {
      env = serviceEnvVars(servicesForPod(this.reflector.store.values(), namespace, enableServiceLinks));
      this.memo.set(key, env);
    }
    return env;
  }
}
