/**
 * hostPort conflicts (upstream scheduler nodeports.Fits with
 * schedutil.GetHostPorts and framework.HostPortInfo.CheckConflict): the
 * host ports of a pod are those of its containers and sidecars (ordinary
 * init containers do not hold ports); a wanted (hostIP, protocol, port)
 * conflicts with a used one on the same IP or on 0.0.0.0, and a wanted
 * 0.0.0.0 conflicts with the port on any IP. An empty hostIP is 0.0.0.0 and
 * an empty protocol TCP. Pure.
 */
import type { ContainerPort, Pod } from '../../api/pod.js';
import { isRestartableInitContainer } from '../../pod/init-containers.js';

const BIND_ALL = '0.0.0.0';

/** Host ports by spec object (specs are replaced, never mutated, when a pod changes): admission asks for every active pod's. */
const memo = new WeakMap<object, ContainerPort[]>();

/** Upstream GetHostPorts: ports with a hostPort > 0 of sidecars and regular containers. */
export function hostPortsOf(pod: Pod): ContainerPort[] {
  const cached = memo.get(pod.spec);
  if (cached) return cached;
  const out: ContainerPort[] = [];
  for (const c of pod.spec.initContainers ?? [])
    if (isRestartableInitContainer(c)) out.push(...(c.ports ?? []).filter((p) => (p.hostPort ?? 0) > 0));
  for (const c of pod.spec.containers ?? []) out.push(...(c.ports ?? []).filter((p) => (p.hostPort ?? 0) > 0));
  memo.set(pod.spec, out);
  return out;
}

/** Host ports in use, by host IP, as `PROTOCOL/port` keys (upstream HostPortInfo). */
export class HostPortInfo {
  private readonly byIP = new Map<string, Set<string>>();

  static of(pods: Iterable<Pod>): HostPortInfo {
    const info = new HostPortInfo();
    for (const p of pods) {
      const ports = hostPortsOf(p);
      for (let i = 0; i < ports.length; i++) info.add(ports[i]);
    }
    return info;
  }

  add(p: ContainerPort): void {
    const ip = p.hostIP || BIND_ALL;
    const set = this.byIP.get(ip) ?? new Set<string>();
    set.add(`${p.protocol || 'TCP'}/${p.hostPort}`);
    this.byIP.set(ip, set);
  }

  conflicts(p: ContainerPort): boolean {
    if (!p.hostPort || p.hostPort <= 0) return false;
    const ip = p.hostIP || BIND_ALL;
    const key = `${p.protocol || 'TCP'}/${p.hostPort}`;
    if (ip === BIND_ALL) return [...this.byIP.values()].some((s) => s.has(key));
    return [BIND_ALL, ip].some((k) => this.byIP.get(k)?.has(key) === true);
  }
}

/** Upstream nodeports.Fits: none of the pod's host ports is in use by the other pods. */
export function fitsHostPorts(pod: Pod, others: Iterable<Pod>): boolean {
  const wanted = hostPortsOf(pod);
  if (wanted.length === 0) return true;
  const used = HostPortInfo.of(others);
  return !wanted.some((p) => used.conflicts(p));
}
