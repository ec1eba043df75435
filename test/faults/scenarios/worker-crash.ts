/**
 * Every worker thread of the agent's pool terminated at a random moment while
 * its pods start, through the test-only fault hook (KTS_TEST_FAULT_HOOKS=1 +
 * SIGUSR2, src/main/fault-hooks.ts): the PLEG relist loop, pod syncs and
 * inspections in flight on those threads die with them. Nothing is done to
 * recover: the agent must replace the threads and retry on its own.
 */
import type { Fault, FaultContext } from '../fault.js';

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

const TASK_WORDS = { relist: 'a PLEG relist', syncPod: 'a pod sync', inspect: 'a PLEG inspection' } as const;
/** How the agent logs a task of each type failed by its thread's exit (tasks of other types on the thread die too). */
const FAILED = /worker thread failed while running (task \\?"(\w+)\\?"|the relist loop): worker exited with code: 70/;
/** The agent's line when a task claimed the armed crash (src/main/startup/fault-hooks.ts), with the claim's time. */
const FIRED = /Fault hook: the armed worker crash fired.*claimedAt"?[=:]"([^"]+)"/;
/**
 * How long an armed crash may wait for its task: a pod's next sync once the start is over comes at its
 * resync, 60 s jittered up to +50 % (pod-workers.ts), so up to 90 s; and a margin.
 */
const CLAIM_DEADLINE_MS = 100_000;

/**
 * One worker thread ended while it runs a task of one type (a relist, a pod sync, an inspection), at a
 * random moment while the pods start: KTS_TEST_FAULT_HOOKS=<type> + SIGUSR2 arms the crash, and the next
 * such task ends its own thread while in flight (src/shared/crash-arm.ts), with the other tasks on that
 * thread. Nothing is done to recover. Recovery is timed from the hit (the task's claim, which the agent
 * logs with its time), not from the arming; a crash no task claimed within CLAIM_DEADLINE_MS is a miss.
 * The run notes which tasks the crash failed, from the agent's log.
 */
export function workerCrashAimed(task: 'relist' | 'syncPod' | 'inspect', pods: number): Fault {
  const failedFrom = new WeakMap<FaultContext, number>();
  return {
    id: `worker-crash-${task === 'syncPod' ? 'sync' : task}-sim`,
    title: (n) => `one worker thread ended while it runs ${TASK_WORDS[task]}, during the start of ${n} pods (simulated runtime)`,
    moment: 'start',
    node: { runtime: 'sim', pods, agentEnv: { KTS_TEST_FAULT_HOOKS: task } },
    inject: async (ctx) => {
      const { agent } = ctx.node;
      // The hook is installed once the pool runs; a signal before that would end the process.
      await agent.until('the fault hook', () => agent.logs.some((l) => l.includes('SIGUSR2 ends the thread of the next task')));
      const from = agent.logs.length;
      failedFrom.set(ctx, from);
      process.kill(agent.pid!, 'SIGUSR2');
      const armedAt = Date.now();
      const fired = () => agent.logs.slice(from).find((l) => FIRED.test(l));
      // Then the thread's end, as the pool notices it (the failed tasks' lines).
      const ended = () => agent.logs.slice(from).some((l) => FAILED.test(l));
      const hit = await agent
        .until('the armed crash', () => fired() !== undefined && ended(), CLAIM_DEADLINE_MS)
        .then(
          () => true,
          () => false,
        );
      const claimedAt = Date.parse(FIRED.exec(fired() ?? '')?.[1] ?? '');
      if (hit && Number.isFinite(claimedAt)) {
        ctx.hitAt = claimedAt;
        const noticed = agent.logTimes(FAILED).find((t) => t >= armedAt);
        ctx.notes.push(
          `crash hit ${claimedAt - armedAt} ms after arming` +
            (noticed !== undefined ? `; the pool logged the thread's end ${noticed - claimedAt} ms after the hit` : ''),
        );
      } else {
        ctx.missed = fired()
          ? `the crash fired (${FIRED.exec(fired()!)?.[1]}) but no task failed within ${CLAIM_DEADLINE_MS / 1000} s of arming`
          : `no ${task} task ran within ${CLAIM_DEADLINE_MS / 1000} s of arming: the crash never fired`;
        ctx.notes.push(ctx.missed);
      }
    },
    recover: async () => undefined,
    finalNotes: (ctx) => {
      const counts = new Map<string, number>();
      for (const l of ctx.node.agent.logs.slice(failedFrom.get(ctx) ?? 0)) {
        const m = FAILED.exec(l);
        if (m) counts.set(m[2] ?? 'relist loop', (counts.get(m[2] ?? 'relist loop') ?? 0) + 1);
      }
      return [`tasks failed by the crash (log lines): ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ') || 'none logged'}`];
    },
  };
}
