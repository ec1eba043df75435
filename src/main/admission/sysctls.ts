/**
 * Pod sysctls admission (upstream pkg/kubelet/sysctl allowlist.go with the
 * safe sysctls of safe_sysctls.go): every spec.securityContext.sysctls name
 * must be on the allowlist (the safe sysctls the running kernel namespaces),
 * and a net.* sysctl is refused for a hostNetwork pod, an IPC one for a
 * hostIPC pod. Rejection reason SysctlForbidden. Pure apart from the kernel
 * version, which the caller passes in. kubelet-ts has no
 * allowedUnsafeSysctls setting, so only the safe list is allowed.
 */
import type { Pod } from '../../api/pod.js';

export const SYSCTL_FORBIDDEN_REASON = 'SysctlForbidden';

type Namespace = 'ipc' | 'net';

/** Upstream safeSysctls with the kernel version that first namespaces each. */
const SAFE_SYSCTLS: readonly { name: string; kernel?: [number, number] }[] = [
  { name: 'kernel.shm_rmid_forced' },
  { name: 'net.ipv4.ip_local_port_range' },
  { name: 'net.ipv4.tcp_syncookies' },
  { name: 'net.ipv4.ping_group_range' },
  { name: 'net.ipv4.ip_unprivileged_port_start' },
  { name: 'net.ipv4.ip_local_reserved_ports', kernel: [3, 16] },
  { name: 'net.ipv4.tcp_keepalive_time', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_fin_timeout', kernel: [4, 6] },
  { name: 'net.ipv4.tcp_keepalive_intvl', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_keepalive_probes', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_rmem' },
  { name: 'net.ipv4.tcp_wmem' },
];

/** `major.minor` of a kernel release string such as os.release() ("6.1.0-18-amd64"); undefined if unparsable. */
export function parseKernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Upstream SafeSysctlAllowlist: the safe sysctls available on this kernel (unknown kernel: only the unversioned ones). */
export function safeSysctlAllowlist(kernel: [number, number] | undefined): string[] {
  return SAFE_SYSCTLS.filter(
    (s) => !s.kernel || (kernel !== undefined && (kernel[0] > s.kernel[0] || (kernel[0] === s.kernel[0] && kernel[1] >= s.kernel[1]))),
  ).map((s) => s.name);
}

/** Upstream utilsysctl.NormalizeName: `net/ipv4/conf/eno2.100/rp_filter` → `net.ipv4.conf.eno2/100.rp_filter`. */
export function normalizeSysctlName(name: string): string {
  const i = name.search(/[./]/);
  if (i === -1 || name[i] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

/** Upstream utilsysctl.GetNamespace for the names the allowlist can hold. */
function namespaceOf(name: string): Namespace | undefined {
  if (name.startsWith('net.')) return 'net';
  if (name === 'kernel.sem' || name.startsWith('kernel.shm') || name.startsWith('kernel.msg') || name.startsWith('fs.mqueue.'))
    return 'ipc';
  return undefined;
}

/** The first forbidden sysctl of the pod as upstream's message (`forbidden sysctl: …`), or undefined when all are allowed. */
export function forbiddenSysctl(pod: Pod, allowlist: readonly string[]): string | undefined {
  const allowed = new Set(allowlist);
  for (const s of pod.spec.securityContext?.sysctls ?? []) {
    const name = normalizeSysctlName(s.name);
    if (!allowed.has(name)) return `forbidden sysctl: ${JSON.stringify(name)} not allowlisted`;
    const ns = namespaceOf(name);
    if ((ns === 'net' && pod.spec.hostNetwork) || (ns === 'ipc' && pod.spec.hostIPC)) {
      return `forbidden sysctl: ${JSON.stringify(name)} not allowed with host ${ns} enabled`;
    }
  }
  return undefined;
}
