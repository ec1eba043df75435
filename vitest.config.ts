import { defineConfig } from 'vitest/config';

// Three suites. unit: pure functions, no processes. integration: real sockets,
// the simulated CRI runtime and local HTTP servers. e2e: real containerd; it is
// skipped unless KUBELET_TS_E2E=1 (or CI=true), and then a missing runtime fails.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
