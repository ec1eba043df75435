/**
 * The e2e suite runs against real containerd started by
 * `scripts/containerd.sh up`. It is skipped unless KTS_E2E=1 or CI=true; when
 * enabled, a missing or unreachable runtime FAILS the run (never skips).
 */
import { describe } from 'vitest';

export const E2E_ENABLED = process.env.KTS_E2E === '1' || process.env.CI === 'true';
export const CONTAINERD_ENDPOINT = process.env.KTS_CRI_ENDPOINT ?? 'unix:///run/kubelet-ts-containerd/containerd.sock';

export const SKIP_MESSAGE =
  'e2e suite skipped: it needs real containerd. Enable it with `bash scripts/containerd.sh up && KTS_E2E=1 npm test` as root ' +
  '(CI=true enables it too, and then a missing runtime fails the run).';

/** describe() when e2e is enabled, otherwise describe.skip() with the enabling instructions. */
export function describeE2E(name: string, body: () => void): void {
  if (E2E_ENABLED) {
    describe(name, body);
  } else {
    console.warn(SKIP_MESSAGE);
    describe.skip(`${name} (${SKIP_MESSAGE})`, body);
  }
}
