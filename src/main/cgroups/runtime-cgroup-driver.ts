/**
 * The cgroup driver the runtime uses, from its verbose CRI Status info
 * (containerd 1.6: `config.containerd.runtimes[defaultRuntimeName].options
 * .SystemdCgroup`). Pure. Undefined when the info does not say (another
 * runtime, or a runtime type without the option): then nothing is checked.
 * Upstream v1.20 does not check; a mismatch there fails every pod start
 * with a runtime error instead of one clear start-up error.
 */
import type { CgroupDriver } from '../config/kubelet-config.js';

interface ContainerdInfo {
  containerd?: {
    defaultRuntimeName?: string;
    runtimes?: Record<string, { options?: { SystemdCgroup?: unknown } | null } | undefined>;
  };
}

export function runtimeCgroupDriver(info: Record<string, string> | undefined): CgroupDriver | undefined {
  const raw = info?.['config'];
  if (!raw) return undefined;
  let config: ContainerdInfo;
  try {
    config = JSON.parse(raw) as ContainerdInfo;
  } catch {
    return undefined;
  }
  const c = config.containerd;
  const runtime = c?.defaultRuntimeName ? c.runtimes?.[c.defaultRuntimeName] : undefined;
  const systemd = runtime?.options?.SystemdCgroup;
  return typeof systemd === 'boolean' ? (systemd ? 'systemd' : 'cgroupfs') : undefined;
}
