import { describe, expect, it } from 'vitest';
import { nodeIPProblem, resolveNodeAddresses, type AddressEnv } from '../../src/main/node/node-address.js';

type Iface = { address: string; family: string; internal: boolean };
const v4 = (address: string, internal = false): Iface => ({ address, family: 'IPv4', internal });
const v6 = (address: string, internal = false): Iface => ({ address, family: 'IPv6', internal });

const IFACES: Record<string, Iface[]> = {
  lo: [v4('127.0.0.1', true), v6('::1', true)],
  eth0: [v4('10.0.0.5'), v6('2001:db8::5'), v6('fe80::1')],
  eth1: [v4('169.254.10.1'), v4('192.168.7.2'), v6('fe90::1')],
};

/** The AddressEnv seam: fixed interfaces, a scripted resolver, a default route. */
function env(o: { ifaces?: Record<string, Iface[]>; resolve?: string[] | Error; route?: string } = {}) {
  const lookups: string[] = [];
  const e: AddressEnv = {
    interfaces: () => o.ifaces ?? IFACES,
    resolve: async (name) => {
      lookups.push(name);
      if (o.resolve instanceof Error) throw o.resolve;
      return o.resolve ?? [];
    },
    defaultRouteInterface: () => o.route,
  };
  return { e, lookups };
}

// Upstream validateNodeIP: not loopback, multicast, link-local unicast
// (169.254/16, fe80::/10) or unspecified, and assigned to one of the host's interfaces.
describe('nodeIPProblem', () => {
  it.each<[string, RegExp | undefined]>([
    ['10.0.0.5', undefined],
    ['192.168.7.2', undefined],
    ['2001:db8::5', undefined],
    ['127.0.0.1', /loopback/],
    ['127.0.1.1', /loopback/],
    ['::1', /loopback/],
    ['169.254.10.1', /link-local/],
    ['fe80::1', /link-local/],
    // fe80::/10 spans fe80:: to febf:…; fe90::1 is link-local too.
    ['fe90::1', /link-local/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['ff02::1', /multicast/],
    ['0.0.0.0', /all zeros/],
    ['::', /all zeros/],
    ['10.9.9.9', /not found in the host's network interfaces/],
    ['2001:db8::99', /not found in the host's network interfaces/],
    ['node1', /not an IP address/],
  ])('%s → %s', (ip, problem) => {
    const got = nodeIPProblem(ip, env().e);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(problem);
  });
});

const hostnameAddr = { type: 'Hostname', address: 'node1' };

// Upstream nodestatus.NodeAddress without a cloud provider: --node-ip if set
// (validated), else the hostname when it is an IP, else the first valid IPv4 the
// node name resolves to (else the first valid IPv6), else the default-route
// interface's address; otherwise "can't get ip address of node <name>. error: …".
describe('resolveNodeAddresses', () => {
  it.each<{ name: string; flag?: string; nodeName?: string; opts?: Parameters<typeof env>[0]; ip: string; lookedUp: string[] }>([
    { name: '--node-ip', flag: '10.0.0.5', opts: { resolve: new Error('must not resolve') }, ip: '10.0.0.5', lookedUp: [] },
    { name: '--node-ip with spaces', flag: ' 192.168.7.2 ', ip: '192.168.7.2', lookedUp: [] },
    { name: 'node name is an IP', nodeName: '10.0.0.5', ip: '10.0.0.5', lookedUp: [] },
    {
      name: 'DNS: first usable IPv4, skipping loopback and foreign addresses',
      opts: { resolve: ['127.0.1.1', '10.1.1.1', '2001:db8::5', '10.0.0.5', '192.168.7.2'] },
      ip: '10.0.0.5',
      lookedUp: ['node1'],
    },
    { name: 'DNS: only a usable IPv6', opts: { resolve: ['127.0.1.1', '2001:db8::5'] }, ip: '2001:db8::5', lookedUp: ['node1'] },
    {
      name: 'DNS: nothing usable, default route interface',
      opts: { resolve: ['127.0.1.1'], route: 'eth0' },
      ip: '10.0.0.5',
      lookedUp: ['node1'],
    },
    {
      name: 'DNS fails, default route interface',
      opts: { resolve: Object.assign(new Error('getaddrinfo ENOTFOUND node1'), { code: 'ENOTFOUND' }), route: 'eth0' },
      ip: '10.0.0.5',
      lookedUp: ['node1'],
    },
  ])('$name', async ({ flag = '', nodeName = 'node1', opts, ip, lookedUp }) => {
    const { e, lookups } = env(opts);
    expect(await resolveNodeAddresses(flag, nodeName, 'node1', e)).toEqual([{ type: 'InternalIP', address: ip }, hostnameAddr]);
    expect(lookups).toEqual(lookedUp);
  });

  it.each([
    ['127.0.0.1', /loopback/],
    ['169.254.10.1', /link-local/],
    ['10.9.9.9', /not found in the host's network interfaces/],
  ])('an invalid --node-ip %s fails validation', async (flag, why) => {
    const p = resolveNodeAddresses(flag, 'node1', 'node1', env().e);
    await expect(p).rejects.toThrow(/validate/);
    await expect(p).rejects.toThrow(why);
  });

  it.each([
    { name: 'DNS fails and there is no default route', opts: { resolve: new Error('getaddrinfo ENOTFOUND node1') } },
    { name: 'only loopback resolves and there is no default route', opts: { resolve: ['127.0.1.1'] } },
    { name: 'the default route interface has no IPv4', opts: { resolve: [], route: 'lo' } },
  ])('no address: $name', async ({ opts }) => {
    await expect(resolveNodeAddresses('', 'node1', 'node1', env(opts).e)).rejects.toThrow(/^can't get ip address of node node1\. error: /);
  });
});
