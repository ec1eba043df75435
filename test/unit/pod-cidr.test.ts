import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { PodCidr, startPodCidr } from '../../src/main/node/pod-cidr.js';

/** A CRI that records UpdateRuntimeConfig calls and can refuse the next ones. */
function fakeCri() {
  const calls: string[] = [];
  const failures: Error[] = [];
  return {
    calls,
    failures,
    cri: {
      updateRuntimeConfig: async (req?: { runtimeConfig?: { networkConfig?: { podCidr?: string } } }) => {
        calls.push(req?.runtimeConfig?.networkConfig?.podCidr ?? '');
        const err = failures.shift();
        if (err) throw err;
        return {};
      },
    },
  };
}

// Upstream kubelet_network.go updatePodCIDR.
describe('PodCidr: CRI UpdateRuntimeConfig when the pod CIDR changes', () => {
  it('calls the runtime only for a change, and reports whether it changed', async () => {
    const f = fakeCri();
    const p = new PodCidr(f.cri, silentLogger());
    expect(await p.update('')).toBe(false);
    expect(await p.update('10.77.0.0/24')).toBe(true);
    expect(await p.update('10.77.0.0/24')).toBe(false);
    expect(await p.update('10.77.0.0/24,fd00::/64')).toBe(true);
    expect(f.calls).toEqual(['10.77.0.0/24', '10.77.0.0/24,fd00::/64']);
    expect(p.cidr).toBe('10.77.0.0/24,fd00::/64');
  });

  it('a refusal keeps the old CIDR, so the next update tries again', async () => {
    const f = fakeCri();
    f.failures.push(new Error('runtime says no'));
    const p = new PodCidr(f.cri, silentLogger());
    await expect(p.update('10.77.0.0/24')).rejects.toThrow('failed to update pod CIDR: runtime says no');
    expect(p.cidr).toBe('');
    expect(await p.update('10.77.0.0/24')).toBe(true);
    expect(f.calls).toEqual(['10.77.0.0/24', '10.77.0.0/24']);
  });

  it('concurrent updates run one after the other (upstream updatePodCIDRMux)', async () => {
    const f = fakeCri();
    const p = new PodCidr(f.cri, silentLogger());
    expect(await Promise.all([p.update('10.1.0.0/24'), p.update('10.1.0.0/24')])).toEqual([true, false]);
    expect(f.calls).toEqual(['10.1.0.0/24']);
  });

  it('--pod-cidr is sent at start; an empty one sends nothing', async () => {
    const f = fakeCri();
    const p = startPodCidr(f.cri, '10.9.0.0/16', silentLogger());
    startPodCidr(f.cri, '', silentLogger());
    expect(await p.update('10.9.0.0/16')).toBe(false);
    expect(f.calls).toEqual(['10.9.0.0/16']);
  });
});
