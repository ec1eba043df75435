/**
 * Every worker thread of the agent's pool terminated at a random moment while
 * its pods start, through the test-only fault hook (KTS_TEST_FAULT_HOOKS=1 +
 * SIGUSR2, src/main/fault-hooks.ts): the PLEG relist loop, pod syncs and
 * inspections in flight on those threads die with them. Nothing is done to
 * recover: the agent must replace the threads and retry on its own.
 */
import type { Fault } from '../fault.js';

export function workerCrashDuringStart(pods: number): Fault {
  return {
    id: 'worker-crash-start-sim',
    title: (n) =>
      `every worker thread terminated during the start of ${n} pods (simulated runtime); relist loop, syncs and inspections in flight`,
    moment: 'start',
    node: { runtime: 'sim', pods, agentEnv: { KTS_TEST_FAULT_HOOKS: '1' } },
    inject: async ({ node }) => {
      const seen = node.agent.logs.filter((l) => l.includes('Fault hook: terminated the worker threads')).length;
      process.kill(node.agent.pid!, 'SIGUSR2');
      await node.agent.until(
        'the fault hook to terminate the workers',
        () => node.agent.logs.filter((l) => l.includes('Fault hook: terminated the worker threads')).length > seen,
      );
    },
    recover: async () => undefined,
  };
}
