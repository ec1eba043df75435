/**
 * The agent killed with SIGKILL at a random moment while its pods start, and
 * started again at once on the same root dir and manifests (as a supervisor
 * with Restart=always would): the new agent adopts what runs (on the embedded
 * sim: the sim left by the killed agent, within --orphan-grace).
 */
import type { Fault } from '../fault.js';

export function agentKillDuringStart(runtime: 'sim' | 'containerd', pods: number): Fault {
  return {
    id: `agent-kill-start-${runtime}`,
    title: (n) =>
      `agent SIGKILL during the start of ${n} pods (${runtime === 'sim' ? 'embedded simulated runtime' : 'containerd'}), restarted at once`,
    moment: 'start',
    node: { runtime, pods },
    inject: ({ node }) => node.agent.stop('SIGKILL'),
    recover: ({ node }) => node.agent.start(),
  };
}
