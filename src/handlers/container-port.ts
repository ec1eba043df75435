/**
 * Upstream probe.ResolveContainerPort, shared by probes and lifecycle hooks:
 * a number is the port; a string is a named port of the container, or else a
 * number written as a string. The result must be 1–65535. Errors carry Go's
 * wording (they reach events).
 */
import type { Container } from '../api/pod.js';

/** intstr.IntOrString. */
type IntOrString = number | string;

export function resolveContainerPort(port: IntOrString, container: Pick<Container, 'ports'>): number {
  let n: number;
  if (typeof port === 'number') {
    n = port;
  } else {
    const named = container.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else throw new Error(`strconv.Atoi: parsing ${JSON.stringify(port)}: invalid syntax`);
  }
  if (n > 0 && n < 65536) return n;
  throw new Error(`invalid port number: ${n}`);
}

/** Go's net.JoinHostPort: IPv6 literals in brackets. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
