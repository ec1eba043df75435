/**
 * The node's addresses (upstream nodestatus.NodeAddress without a cloud
 * provider): InternalIP then Hostname. The IP is --node-ip when given (it must be
 * assigned to this host), else the node name when it is an IP, else the first
 * usable address the node name resolves to, else the address of the interface
 * of the default route (utilnet.ResolveBindAddress).
 */
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { errorMessage } from '../../common/error-message.js';

export interface NodeAddress {
  type: 'InternalIP' | 'Hostname';
  address: string;
}

/** Seams for tests. */
export interface AddressEnv {
  interfaces: () => Record<string, { address: string; family: string; internal: boolean }[] | undefined>;
  resolve: (name: string) => Promise<string[]>;
  defaultRouteInterface: () => string | undefined;
}

function defaultRouteInterface(): string | undefined {
  try {
    for (const line of readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
      const [iface, dest, , , , , , mask] = line.trim().split(/\s+/);
      if (dest === '00000000' && mask === '00000000') return iface;
    }
  } catch {
    // No /proc/net/route: no default route known.
  }
  return undefined;
}

export const hostAddressEnv: AddressEnv = {
  interfaces: () => networkInterfaces(),
  resolve: async (name) => (await lookup(name, { all: true })).map((a) => a.address),
  defaultRouteInterface,
};

function localAddresses(env: AddressEnv): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(env.interfaces())) for (const a of list ?? []) out.add(a.address);
  return out;
}

/** Upstream validateNodeIP: not loopback, link-local, multicast or unspecified, and assigned to this host. */
export function nodeIPProblem(ip: string, env: AddressEnv): string | undefined {
  if (isIP(ip) === 0) return `${JSON.stringify(ip)} is not an IP address`;
  if (/^127\./.test(ip) || ip === '::1') return `node IP: ${ip} is a loopback address`;
  if (/^169\.254\./.test(ip) || /^fe[89ab][0-9a-f]:/i.test(ip)) return `node IP: ${ip} is a link-local address`;
  if (/^(22[4-9]|23\d)\./.test(ip) || /^ff/i.test(ip)) return `node IP: ${ip} is a multicast address`;
  if (ip === '0.0.0.0' || ip === '::') return `node IP: ${ip} is an all zeros address`;
  if (!localAddresses(env).has(ip)) return `node IP: ${ip} not found in the host's network interfaces`;
  return undefined;
}

/** Resolves InternalIP(s) and Hostname; throws with upstream's message when no IP can be found. */
export async function resolveNodeAddresses(
  nodeIPFlag: string,
  nodeName: string,
  hostname: string,
  env = hostAddressEnv,
): Promise<NodeAddress[]> {
  const hostnameAddress: NodeAddress = { type: 'Hostname', address: hostname };
  const configured = nodeIPFlag
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (configured.length > 0) {
    for (const ip of configured) {
      const problem = nodeIPProblem(ip, env);
      if (problem) throw new Error(`failed to validate --node-ip: ${problem}`);
    }
    return [...configured.map((address): NodeAddress => ({ type: 'InternalIP', address })), hostnameAddress];
  }
  if (isIP(nodeName) !== 0) return [{ type: 'InternalIP', address: nodeName }, hostnameAddress];
  let lookupError = '';
  try {
    const resolved = await env.resolve(nodeName);
    const usable = resolved.filter((ip) => nodeIPProblem(ip, env) === undefined);
    const pick = usable.find((ip) => isIP(ip) === 4) ?? usable[0];
    if (pick) return [{ type: 'InternalIP', address: pick }, hostnameAddress];
  } catch (err) {
    lookupError = errorMessage(err);
  }
  const iface = env.defaultRouteInterface();
  const viaRoute = iface ? env.interfaces()[iface]?.find((a) => a.family === 'IPv4' && !a.internal)?.address : undefined;
  if (viaRoute) return [{ type: 'InternalIP', address: viaRoute }, hostnameAddress];
  throw new Error(`can't get ip address of node ${nodeName}. error: ${lookupError || 'no usable address and no default route'}`);
}
