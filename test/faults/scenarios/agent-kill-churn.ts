/**
 * The agent killed with SIGKILL during a churn of its static pods, and started
 * again at once: with every pod running, a config manager replaces a fifth of
 * the long-running pods' manifests by new pods (deleting `wave` manifests and
 * writing `wave` new ones every 250 ms), and the kill hits at a moment drawn
 * uniformly from [0, windowMs] after the churn began; the churn goes on across
 * the kill and the restart. After it, every deleted pod must be stopped and gone
 * from /pods, every new pod running once (run-once ones Succeeded), and the
 * pods not churned untouched.
 */
import { seededRandom } from '../../../src/sim/faults.js';
import type { Fault, FaultContext } from '../fault.js';
import { makeWorkload, manifestOf, runtimePodName, type DesiredPod } from '../workload.js';

export interface ChurnOptions {
  /** The kill's moment: uniform in [0, windowMs] after the churn began. */
  windowMs: number;
  /** Manifests deleted and written per step (each 250 ms). */
  wave: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function agentKillDuringChurn(pods: number, o: ChurnOptions, seed = 1): Fault {
  const rand = seededRandom(seed);
  const churns = new WeakMap<FaultContext, Promise<void>>();
  let runs = 0;
  return {
    id: 'agent-kill-churn-sim',
    title: (n) =>
      `agent SIGKILL during a churn of ${n} pods (a fifth of the long-running ones replaced by new pods, ${o.wave} of each every 250 ms; ` +
      `simulated runtime), restarted at once`,
    moment: 'steady',
    node: { runtime: 'sim', pods },
    inject: async (ctx) => {
      const { node } = ctx;
      const run = ++runs;
      const long = node.workload.pods.filter((p) => p.kind === 'long');
      const victims = long.filter((_, i) => i % 5 === run % 5);
      const fresh: DesiredPod[] = makeWorkload('', victims.length).pods.map((p) => ({ ...p, name: `r${run}-${p.name}` }));
      const killAfter = Math.round(rand() * o.windowMs);
      const began = Date.now();
      let steps = 0;
      const churn = (async () => {
        for (let i = 0; i < victims.length; i += o.wave) {
          for (const v of victims.slice(i, i + o.wave)) {
            node.agent.deleteManifest(v.name);
            v.kind = 'gone';
          }
          for (const f of fresh.slice(i, i + o.wave)) {
            node.agent.writeManifest(f.name, manifestOf(f, node.workload.namespace));
            node.workload.pods.push(f);
          }
          steps++;
          await sleep(250);
        }
      })();
      churns.set(ctx, churn);
      await sleep(killAfter);
      const stepsBeforeKill = steps;
      await node.agent.stop('SIGKILL');
      ctx.notes.push(
        `${victims.length} pods replaced in ${Math.ceil(victims.length / o.wave)} steps; killed ${Date.now() - began} ms after the churn began ` +
          `(drawn ${killAfter} ms), after ${stepsBeforeKill} steps`,
      );
    },
    recover: async (ctx) => {
      await ctx.node.agent.start();
      await churns.get(ctx);
    },
    pending: async (ctx) => {
      const { node } = ctx;
      const listed = new Set((await node.pods()).map((p) => p.metadata?.name ?? ''));
      const left = node.workload.pods
        .filter((p) => p.kind === 'gone')
        .map((p) => runtimePodName(node.workload, p.name, node.nodeName))
        .filter((n) => listed.has(n));
      return left.length ? `${left.length} deleted pods still in /pods (${left.slice(0, 3).join(', ')})` : undefined;
    },
  };
}
