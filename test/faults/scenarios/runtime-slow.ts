/**
 * The embedded simulated runtime answering slowly for a while with every pod
 * running: every call takes `latencyMs`, a fraction `errorRate` fails
 * UNAVAILABLE, and ListPodSandbox / ListContainers leave out a fraction
 * `dropFraction` of what exists (a seeded coin flip per item, src/sim/faults.ts),
 * so the agent's PLEG sees containers and sandboxes vanish and come back. The
 * fault is set through the sim's control socket, which the embedded sim serves
 * only under the test-only fault hooks (KTS_TEST_FAULT_HOOKS, here `1`, whose
 * SIGUSR2 this fault never sends); it holds for `holdMs`, then is cleared, and
 * recovery is timed from then.
 *
 * While it holds, the suite lists the runtime itself (through the same slow,
 * failing, truncated calls: a duplicate seen in a truncated list is real) and
 * counts duplicates: a sandbox or container the agent made again for a pod that
 * had one is a broken invariant even if it is gone by the end.
 */
import { join } from 'node:path';
import { SimControlClient } from '../../../src/sim/control-client.js';
import type { FaultConfig } from '../../../src/sim/faults.js';
import type { Fault, FaultContext } from '../fault.js';
import { checkRuntime } from '../invariants.js';

export interface SlowRuntimeOptions {
  holdMs: number;
  latencyMs: number;
  errorRate: number;
  dropFraction: number;
}

const control = (ctx: FaultContext) => new SimControlClient(`unix://${join(ctx.node.agent.dir, 'root/sim/ctl.sock')}`);

export function runtimeSlowSteady(pods: number, o: SlowRuntimeOptions): Fault {
  const faults: FaultConfig = {
    default: { latency: { kind: 'fixed', ms: o.latencyMs }, errorRate: o.errorRate },
    rpcs: { ListPodSandbox: { dropFraction: o.dropFraction }, ListContainers: { dropFraction: o.dropFraction } },
  };
  return {
    id: 'runtime-slow-steady-sim',
    title: (n) =>
      `simulated runtime slow for ${o.holdMs / 1000} s with ${n} pods running: every call ${o.latencyMs / 1000} s, ` +
      `${Math.round(o.errorRate * 100)} % failing, ${Math.round(o.dropFraction * 100)} % of list items left out`,
    moment: 'steady',
    // A fresh node per run: the containers a run restarts stay (exited) on a reused node and would count again.
    fresh: true,
    node: { runtime: 'sim', pods, agentEnv: { KTS_TEST_FAULT_HOOKS: '1' } },
    recoveryFrom: 'recover',
    inject: async (ctx) => {
      const ctl = control(ctx);
      const before = await ctl.stats();
      await ctl.setFaults(faults);
      const start = Date.now();
      let reads = 0;
      let failed = 0;
      let seen = 0;
      const examples = new Set<string>();
      // The hold is the fault's length, not a wait for a condition; meanwhile the runtime is listed as it is.
      while (Date.now() - start < o.holdMs) {
        try {
          const v = checkRuntime(ctx.node.workload, ctx.node.nodeName, await ctx.node.runtimeView());
          reads++;
          const dups = [...v.duplicateSandboxes, ...v.duplicateContainers];
          seen = Math.max(seen, dups.length);
          for (const d of dups.slice(0, 3)) examples.add(d);
        } catch {
          failed++;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      const after = await ctl.stats();
      const delta = (a: Record<string, number>, b: Record<string, number>, k: string) => (a[k] ?? 0) - (b[k] ?? 0);
      const injected = Object.keys(after.injectedErrors).reduce((s, k) => s + delta(after.injectedErrors, before.injectedErrors, k), 0);
      const calls = Object.keys(after.calls).reduce((s, k) => s + delta(after.calls, before.calls, k), 0);
      ctx.notes.push(
        `held ${((Date.now() - start) / 1000).toFixed(0)} s: ${calls} calls, ${injected} failed by injection, list items left out: ` +
          `${delta(after.droppedListItems, before.droppedListItems, 'ListPodSandbox')} sandboxes, ` +
          `${delta(after.droppedListItems, before.droppedListItems, 'ListContainers')} containers; ` +
          `the suite's own reads meanwhile ${reads} (${failed} failed), most duplicates seen ${seen}`,
      );
      if (seen > 0) ctx.broken.push(`duplicates while the runtime was slow: ${[...examples].join('; ')}`);
    },
    recover: async (ctx) => {
      await control(ctx).setFaults({});
    },
  };
}
