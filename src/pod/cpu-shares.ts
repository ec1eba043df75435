/**
 * CPU requests and limits as the kernel takes them (upstream cm helpers
 * MilliCPUToShares and milliCPUToQuota): cpu.shares from millicores, the CFS
 * quota for a period. Used for a container's CRI resources and for the QoS
 * and pod cgroups.
 */
export const MIN_SHARES = 2;
export const MAX_SHARES = 262_144;
export const SHARES_PER_CPU = 1024;
export const QUOTA_PERIOD_US = 100_000;
export const MIN_QUOTA_PERIOD_US = 1000;

/** Upstream MilliCPUToShares: 0 → 2 (kernel minimum), else milli*1024/1000 clamped to [2, 262144]. */
export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU === 0) return MIN_SHARES;
  const shares = Math.trunc((milliCPU * SHARES_PER_CPU) / 1000);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/** Upstream milliCPUToQuota: 0 → 0 (unlimited), else milli*period/1000, at least 1000 µs. */
export function milliCPUToQuota(milliCPU: number, periodUs: number): number {
  if (milliCPU === 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD_US, Math.trunc((milliCPU * periodUs) / 1000));
}
