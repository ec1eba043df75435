/**
 * The CRI PodSandboxConfig for a pod (upstream kuberuntime_sandbox.go
 * generatePodSandboxConfig + generatePodSandboxLinuxConfig, kubelet_pods.go
 * GeneratePodHostNameAndDomain, network/dns/dns.go GetPodDNS).
 *
 * Pure: every node fact (cluster DNS, the node's resolv.conf *contents*, the
 * pod logs root) comes in through `opts`; nothing here reads files. Throws
 * KubeletTsError for a pod that cannot get a sandbox (invalid hostname).
 */
import { buildPodLogsDirectory } from '../../pod/log-paths.js';
import type { Container, Pod } from '../../api/pod.js';
import { KubeletTsError } from '../../common/errors.js';
import { LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from '../../runtime/types.js';
import {
  NamespaceMode,
  Protocol,
  SecurityProfile_ProfileType,
  type DeepPartial,
  type DNSConfig,
  type NamespaceOption,
  type PodSandboxConfig,
  type PortMapping,
} from '../../gen/runtime/v1/api.js';

export interface SandboxConfigOptions {
  /** Root of pod log directories (KubeletConfiguration podLogsDir, default /var/log/pods). */
  podLogsDir: string;
  /** --cluster-dns; empty or unset means ClusterFirst pods fall back to Default. */
  clusterDNS?: string[];
  /** --cluster-domain, e.g. cluster.local. */
  clusterDomain?: string;
  /**
   * Contents of the node's resolv.conf (--resolv-conf), read by the caller.
   * Unset or '' behaves like upstream's `--resolv-conf=""`: Default-policy pods
   * get nameserver 127.0.0.1 and search ".".
   */
  resolvConf?: string;
  /** Pod cgroup parent; '' (the default) lets the runtime choose. */
  cgroupParent?: string;
}

const HOSTNAME_MAX_LEN = 63;
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 32;
const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const DEFAULT_DNS_OPTIONS = ['ndots:5'];
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Upstream NamespacesForPod (user namespaces not modelled). Shared with container-config. */
export function namespacesForPod(pod: Pod): DeepPartial<NamespaceOption> {
  const s = pod.spec;
  return {
    network: s.hostNetwork ? NamespaceMode.NODE : NamespaceMode.POD,
    pid: s.hostPID ? NamespaceMode.NODE : s.shareProcessNamespace ? NamespaceMode.POD : NamespaceMode.CONTAINER,
    ipc: s.hostIPC ? NamespaceMode.NODE : NamespaceMode.POD,
  };
}

/** Every init and regular container of the pod. */
export function allContainers(pod: Pod): Container[] {
  return [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])];
}

/** Upstream GeneratePodHostNameAndDomain: the pod's hostname and, with a subdomain, its DNS domain. */
export function podHostNameAndDomain(pod: Pod, clusterDomain = ''): { hostname: string; domain: string } {
  const name = pod.metadata.name ?? '';
  let hostname = name;
  if (pod.spec.hostname) {
    if (!DNS1123_LABEL.test(pod.spec.hostname) || pod.spec.hostname.length > HOSTNAME_MAX_LEN) {
      throw new KubeletTsError(
        `pod ${pod.metadata.namespace}/${name}: spec.hostname ${JSON.stringify(pod.spec.hostname)} is not a valid DNS label; fix the pod spec`,
      );
    }
    hostname = pod.spec.hostname;
  }
  if (hostname.length > HOSTNAME_MAX_LEN) {
    hostname = hostname.slice(0, HOSTNAME_MAX_LEN).replace(/[-.]+$/, '');
    if (!hostname)
      throw new KubeletTsError(
        `pod ${pod.metadata.namespace}/${name}: hostname is empty after truncation to ${HOSTNAME_MAX_LEN} characters`,
      );
  }
  const sub = pod.spec.subdomain;
  if (!sub) return { hostname, domain: '' };
  if (!DNS1123_LABEL.test(sub))
    throw new KubeletTsError(`pod ${pod.metadata.namespace}/${name}: spec.subdomain ${JSON.stringify(sub)} is not a valid DNS label`);
  return { hostname, domain: `${sub}.${pod.metadata.namespace ?? ''}.svc.${clusterDomain}` };
}

/** Upstream GeneratePodHostNameAndDomain + GetNodenameForKernel: the UTS hostname. */
export function podHostname(pod: Pod, clusterDomain = ''): string {
  const { hostname, domain } = podHostNameAndDomain(pod, clusterDomain);
  if (domain && pod.spec['setHostnameAsFQDN'] === true) {
    const fqdn = `${hostname}.${domain}`;
    if (fqdn.length > 64)
      throw new KubeletTsError(
        `pod ${pod.metadata.namespace}/${pod.metadata.name ?? ''}: FQDN ${fqdn} is longer than 64 characters; shorten the hostname or subdomain`,
      );
    return fqdn;
  }
  return hostname;
}

// --- DNS ---------------------------------------------------------------------

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** resolv.conf text → nameservers, the last `search` line (trailing dots trimmed, "." dropped), options (last wins per name). */
export function parseResolvConf(text: string): { servers: string[]; searches: string[]; options: string[] } {
  const servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const f = line.split(/\s+/).filter(Boolean);
    if (f.length === 0) continue;
    if (f[0] === 'nameserver' && f[1]) servers.push(f[1]);
    else if (f[0] === 'search')
      searches = f
        .slice(1)
        .filter((s) => s !== '.')
        .map((s) => s.replace(/\.$/, ''));
    else if (f[0] === 'options') options = mergeOptions(options, f.slice(1));
  }
  return { servers, searches, options };
}

/** Upstream mergeDNSOptions: later entries replace earlier ones with the same name; order of first appearance kept. */
function mergeOptions(existing: string[], added: string[]): string[] {
  const m = new Map<string, string>();
  for (const op of [...existing, ...added]) {
    const i = op.indexOf(':');
    m.set(i === -1 ? op : op.slice(0, i), i === -1 ? '' : op.slice(i + 1));
  }
  return [...m].map(([k, v]) => (v ? `${k}:${v}` : k));
}

/**
 * Upstream GetPodDNS. Policy → base config:
 *  None → empty; ClusterFirstWithHostNet, or ClusterFirst without hostNetwork
 *  → cluster DNS servers, searches `<ns>.svc.<domain> svc.<domain> <domain>`
 *  followed by the host's, options ndots:5 (falls back to Default when no
 *  clusterDNS is configured); Default (and ClusterFirst on hostNetwork) → the
 *  node's resolv.conf. spec.dnsConfig is then appended, and the result is
 *  trimmed to 3 nameservers / 32 search paths / 2048 characters of searches.
 */
export function podDNSConfig(pod: Pod, opts: Omit<SandboxConfigOptions, 'podLogsDir'>): DNSConfig {
  const host = opts.resolvConf ? parseResolvConf(opts.resolvConf) : { servers: [], searches: [], options: [] };
  const policy = pod.spec.dnsPolicy || 'ClusterFirst';
  let type: 'none' | 'cluster' | 'host';
  if (policy === 'None') type = 'none';
  else if (policy === 'ClusterFirstWithHostNet') type = 'cluster';
  else if (policy === 'Default') type = 'host';
  else type = pod.spec.hostNetwork ? 'host' : 'cluster'; // ClusterFirst, and unknown policies as upstream

  let cfg: DNSConfig = { servers: [...host.servers], searches: [...host.searches], options: [...host.options] };
  if (type === 'none') cfg = { servers: [], searches: [], options: [] };
  if (type === 'cluster' && opts.clusterDNS?.length) {
    cfg.servers = [...opts.clusterDNS];
    const d = opts.clusterDomain;
    if (d) cfg.searches = unique([`${pod.metadata.namespace ?? ''}.svc.${d}`, `svc.${d}`, d, ...cfg.searches]);
    cfg.options = [...DEFAULT_DNS_OPTIONS];
  } else if (type !== 'none' && !opts.resolvConf) {
    // host policy (or cluster without clusterDNS) with --resolv-conf="": disable lookups.
    cfg = { servers: ['127.0.0.1'], searches: ['.'], options: [] };
  }

  const extra = pod.spec.dnsConfig;
  if (extra) {
    cfg.servers = unique([...cfg.servers, ...(extra.nameservers ?? [])]);
    cfg.searches = unique([...cfg.searches, ...(extra.searches ?? [])]);
    const opt = (extra.options ?? []).filter((o) => o.name).map((o) => (o.value !== undefined ? `${o.name}:${o.value}` : o.name!));
    cfg.options = mergeOptions(cfg.options, opt);
  }
  cfg.servers = cfg.servers.slice(0, MAX_DNS_NAMESERVERS);
  let searches = cfg.searches.slice(0, MAX_DNS_SEARCH_PATHS);
  while (searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) searches = searches.slice(0, -1);
  cfg.searches = searches;
  return cfg;
}

// --- ports and sysctls -------------------------------------------------------

function toProtocol(p: string | undefined): Protocol {
  return p === 'UDP' ? Protocol.UDP : p === 'SCTP' ? Protocol.SCTP : Protocol.TCP;
}

/** Upstream MakePortMappings over every regular container; duplicate port names within a container are dropped. */
export function podPortMappings(pod: Pod): DeepPartial<PortMapping>[] {
  const out: DeepPartial<PortMapping>[] = [];
  for (const c of pod.spec.containers ?? []) {
    const names = new Set<string>();
    for (const p of c.ports ?? []) {
      const family = p.hostIP ? (p.hostIP.includes(':') ? 'v6' : 'v4') : '';
      const name = p.name || `${family}-${p.protocol ?? ''}${p.hostIP ?? ''}:${p.containerPort}:${p.hostPort ?? 0}`;
      if (names.has(name)) continue;
      names.add(name);
      out.push({ protocol: toProtocol(p.protocol), containerPort: p.containerPort, hostPort: p.hostPort ?? 0, hostIp: p.hostIP ?? '' });
    }
  }
  return out;
}

/** Upstream convertSysctlVariableToDotsSeparator: `net/ipv4/ip_forward` → `net.ipv4.ip_forward` (dots and slashes swap). */
export function sysctlToDots(name: string): string {
  const i = name.search(/[./]/);
  if (i === -1 || name[i] === '.') return name;
  return name.replace(/[./]/g, (ch) => (ch === '.' ? '/' : '.'));
}

/** Pod-level groups as upstream orders them: fsGroup first, then supplementalGroups. */
export function podSupplementalGroups(pod: Pod): bigint[] {
  const sc = pod.spec.securityContext;
  const out: bigint[] = [];
  if (sc?.fsGroup !== undefined) out.push(BigInt(sc.fsGroup));
  for (const g of sc?.supplementalGroups ?? []) out.push(BigInt(g));
  return out;
}

// --- the config --------------------------------------------------------------

/** Builds the RunPodSandbox config for `pod` at sandbox attempt `attempt`. */
export function generatePodSandboxConfig(pod: Pod, attempt: number, opts: SandboxConfigOptions): DeepPartial<PodSandboxConfig> {
  const m = pod.metadata;
  const sc = pod.spec.securityContext;
  const sysctls: Record<string, string> = {};
  for (const s of sc?.sysctls ?? []) sysctls[sysctlToDots(s.name)] = s.value;

  const config: DeepPartial<PodSandboxConfig> = {
    metadata: { name: m.name ?? '', namespace: m.namespace ?? '', uid: m.uid ?? '', attempt },
    labels: { ...(m.labels ?? {}), [LABEL_POD_NAME]: m.name ?? '', [LABEL_POD_NAMESPACE]: m.namespace ?? '', [LABEL_POD_UID]: m.uid ?? '' },
    annotations: { ...(m.annotations ?? {}) },
    dnsConfig: podDNSConfig(pod, opts),
    // Host-network sandboxes keep the node's hostname (upstream leaves it empty).
    hostname: pod.spec.hostNetwork ? '' : podHostname(pod, opts.clusterDomain),
    logDirectory: buildPodLogsDirectory(opts.podLogsDir, pod),
    portMappings: podPortMappings(pod),
    linux: {
      cgroupParent: opts.cgroupParent ?? '',
      sysctls,
      securityContext: {
        namespaceOptions: namespacesForPod(pod),
        privileged: allContainers(pod).some((c) => c.securityContext?.privileged === true),
        seccomp: { profileType: SecurityProfile_ProfileType.RuntimeDefault, localhostRef: '' },
        supplementalGroups: podSupplementalGroups(pod),
        ...(sc?.runAsUser !== undefined ? { runAsUser: { value: BigInt(sc.runAsUser) } } : {}),
        ...(sc?.runAsGroup !== undefined ? { runAsGroup: { value: BigInt(sc.runAsGroup) } } : {}),
      },
    },
  };
  return config;
}
