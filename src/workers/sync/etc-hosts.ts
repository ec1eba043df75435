/**
 * The /etc/hosts the kubelet manages for a pod (upstream kubelet_pods.go
 * makeHostsMount / ensureHostsFile): written to pods/<uid>/etc-hosts when a
 * container starts and bound over the container's /etc/hosts, unless a
 * volumeMount already targets /etc/hosts.
 *
 * Synchronous file calls: this runs in a pool worker during a sync, where a
 * local write of a few hundred bytes costs less than the thread-pool round
 * trips of the promise API (see docs/architecture.md, "File system calls").
 */
import { chmodSync, readFileSync } from 'node:fs';
import { writeFileNamed } from '../../common/write-file.js';
import type { Pod } from '../../api/pod.js';

export const ETC_HOSTS_PATH = '/etc/hosts';
export const MANAGED_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';
export const MANAGED_HOSTS_HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';

interface HostAlias {
  ip?: string;
  hostnames?: string[];
}

function hostAliases(pod: Pod): HostAlias[] {
  return (pod.spec['hostAliases'] as HostAlias[] | undefined) ?? [];
}

/** Upstream hostsEntriesFromHostAliases. */
function aliasEntries(aliases: HostAlias[]): string {
  if (aliases.length === 0) return '';
  return `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`).join('')}`;
}

/** Upstream managedHostsFileContent. */
export function managedHostsFileContent(podIPs: readonly string[], hostname: string, domain: string, pod: Pod): string {
  let s = MANAGED_HOSTS_HEADER;
  s += '127.0.0.1\tlocalhost\n';
  s += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  s += 'fe00::0\tip6-localnet\n';
  s += 'fe00::0\tip6-mcastprefix\n';
  s += 'fe00::1\tip6-allnodes\n';
  s += 'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) s += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return s + aliasEntries(hostAliases(pod));
}

/** Upstream nodeHostsFileContent: the node's hosts file plus the pod's aliases. */
export function nodeHostsFileContent(pod: Pod, nodeHostsFile = ETC_HOSTS_PATH): string {
  return MANAGED_HOSTS_HEADER_HOST_NETWORK + readFileSync(nodeHostsFile, 'utf8') + aliasEntries(hostAliases(pod));
}

/** Writes the pod's hosts file (mode 0644) at `file`. */
export function ensureHostsFile(file: string, pod: Pod, podIPs: readonly string[], hostname: string, domain: string): void {
  const content = pod.spec.hostNetwork ? nodeHostsFileContent(pod) : managedHostsFileContent(podIPs, hostname, domain, pod);
  writeFileNamed(file, "the pod's hosts file", content, { mode: 0o644 });
  chmodSync(file, 0o644);
}
