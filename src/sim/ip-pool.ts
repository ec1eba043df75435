/**
 * Pod IPs for non-host-network sandboxes, like a host-local IPAM range: unique
 * per live sandbox, released when the sandbox's network is torn down
 * (StopPodSandbox), handed out round-robin so a released IP is not reused at once.
 */
import { status } from '@grpc/grpc-js';
import { CriError } from '../common/errors.js';

function parseIpv4(s: string): number {
  const p = s.split('.').map(Number);
  if (p.length !== 4 || p.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) throw new Error(`bad IPv4 address "${s}"`);
  return ((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]) >>> 0;
}

function formatIpv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export class IpPool {
  private readonly base: number;
  private readonly size: number;
  private readonly used = new Set<number>();
  private cursor = 1;

  /** `cidr` like 10.244.0.0/16; the network address, the gateway (.1) and broadcast are skipped. */
  constructor(readonly cidr = '10.244.0.0/16') {
    const [addr, bitsText] = cidr.split('/');
    const bits = Number(bitsText);
    if (!Number.isInteger(bits) || bits < 8 || bits > 30) throw new Error(`bad pod subnet "${cidr}": want an IPv4 CIDR between /8 and /30`);
    this.size = 2 ** (32 - bits);
    this.base = (parseIpv4(addr) & ~(this.size - 1)) >>> 0;
  }

  get allocated(): number {
    return this.used.size;
  }

  allocate(sandboxId: string): string {
    const first = 2;
    const last = this.size - 2;
    const span = last - first + 1;
    for (let i = 0; i < span; i++) {
      const off = first + ((this.cursor + i) % span);
      if (this.used.has(off)) continue;
      this.used.add(off);
      this.cursor = off - first + 1;
      return formatIpv4(this.base + off);
    }
    throw new CriError(
      `failed to setup network for sandbox "${sandboxId}": plugin type="host-local" failed (add): failed to allocate for range 0: ` +
        `no IP addresses available in range set: ${formatIpv4(this.base + first)}-${formatIpv4(this.base + last)}`,
      'RunPodSandbox',
      status.UNKNOWN,
    );
  }

  release(ip: string): void {
    if (ip === '') return;
    this.used.delete((parseIpv4(ip) - this.base) >>> 0);
  }
}
