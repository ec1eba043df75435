/**
 * The apiserver faults, on a node whose pods come from the suite's private
 * control plane and which reaches the apiserver through a CuttableProxy of its
 * own (so only this agent is cut off; kubectl and the controllers keep working):
 *
 * - outage: the proxy refuses connections for `outageMs` while one pod in ten is
 *   deleted (gracefully, by kubectl) meanwhile; then it heals. The agent must
 *   stop exactly the deleted pods, confirm their deletion, and keep the others;
 *   the node controller marks the pods NotReady during a long outage, so the
 *   apiserver's Ready conditions must come back too. With `force410`, etcd is
 *   compacted and the apiserver restarted during the outage (a new watch cache),
 *   so the agent's watch from its old resourceVersion gets 410 Gone and must
 *   relist: the run waits for the agent to log that relist.
 * - etcd compaction: etcd compacted to its current revision and the agent's
 *   connections broken once, so every watch is made again from a resourceVersion
 *   older than the compaction.
 */
import { getJson, type LeaseObject } from './node-objects.js';
import type { Fault, FaultContext } from '../fault.js';
import { DEFAULT_HOLD_MS } from '../hold.js';

const RELIST_LOG = 'Watching apiserver pods: the watch expired; relisting';
const relists = (ctx: FaultContext) => ctx.node.agent.logs.filter((l) => l.includes(RELIST_LOG)).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The node controller's node-monitor grace period and node-monitor period (v1.20 defaults), and the lease's renewal interval. */
const NODE_MONITOR_GRACE_MS = 40_000;
const NODE_MONITOR_PERIOD_MS = 5_000;
const LEASE_RENEW_MS = 10_000;

/**
 * The hold window after an outage. The node controller marks a node's pods not Ready once it has not seen
 * the node's lease renewed for its grace period (40 s), looking every 5 s; the lease is renewed every
 * 10 s, so a cut that with one renewal interval reaches the grace can make it do so, and its write can land
 * after the heal and after the agent's first renewal (as in a 410 run on containerd). Such a cut holds for
 * the grace period and one monitor period: a flip the controller bases on anything it saw during the
 * outage comes inside it. A shorter cut never reaches the grace and holds for the default.
 */
export function outageHoldMs(outageMs: number): number {
  return outageMs + LEASE_RENEW_MS >= NODE_MONITOR_GRACE_MS ? NODE_MONITOR_GRACE_MS + NODE_MONITOR_PERIOD_MS : DEFAULT_HOLD_MS;
}

/** Whether the agent's pod watch got 410 and relisted after the fault (and when, after its end), or resumed. */
function podWatchNote(ctx: FaultContext, before: number): string {
  if (relists(ctx) === before) return 'pod watch: resumed from its resourceVersion (no 410)';
  const at = ctx.node.agent.logTimes(/Watching apiserver pods: the watch expired; relisting/).at(-1);
  const from = ctx.endedAt;
  return `pod watch: got 410, relisted${at !== undefined && from !== undefined ? ` ${((at - from) / 1000).toFixed(1)} s after the heal` : ''}`;
}

/** Deletes one in ten of the long-running pods left (graceful, not waiting) and marks them gone; returns how many. */
async function deleteSome(ctx: FaultContext): Promise<number> {
  const { node } = ctx;
  const victims = node.workload.pods.filter((p) => p.kind === 'long').filter((_, i) => i % 10 === 3);
  if (victims.length === 0) return 0;
  await node.cluster!.kubectl('-n', node.workload.namespace, 'delete', 'pods', ...victims.map((p) => p.name), '--wait=false');
  for (const p of victims) p.kind = 'gone';
  return victims.length;
}

export interface OutageOptions {
  outageMs: number;
  /** Compact etcd and restart the apiserver during the outage, so the agent's next watch gets 410 Gone. */
  force410: boolean;
  /** The node's runtime (default the simulated one; containerd gets a private one from the suite). */
  runtime?: 'sim' | 'containerd';
}

export function apiserverOutage(pods: number, o: OutageOptions): Fault {
  const secs = Math.round(o.outageMs / 1000);
  const relistsAt = new WeakMap<FaultContext, number>();
  const runtime = o.runtime ?? 'sim';
  return {
    id: `apiserver-outage-${o.force410 ? '410-' : ''}steady-${runtime}`,
    title: (n) =>
      `apiserver unreachable for ${secs} s with ${n} pods from it running and one in ten deleted meanwhile` +
      (o.force410 ? '; etcd compacted and the apiserver restarted meanwhile, so the next watch gets 410 Gone' : '') +
      (runtime === 'sim' ? ' (simulated runtime)' : ' (containerd)'),
    moment: 'steady',
    node: { runtime, pods, source: 'api' },
    holdMs: outageHoldMs(o.outageMs),
    inject: async (ctx) => {
      const cut = Date.now();
      relistsAt.set(ctx, relists(ctx));
      await ctx.node.proxy!.cut();
      const deleted = await deleteSome(ctx);
      let revision: number | undefined;
      if (o.force410) {
        revision = await ctx.node.cluster!.compactEtcd();
        await ctx.node.cluster!.restartApiserver();
      }
      // The outage itself: its length is the fault, not a wait for a condition.
      await sleep(Math.max(0, o.outageMs - (Date.now() - cut)));
      ctx.notes.push(
        `cut ${Math.round((Date.now() - cut) / 1000)} s; ${deleted} pods deleted meanwhile` +
          (revision !== undefined ? `; etcd compacted at revision ${revision}, apiserver restarted` : ''),
      );
    },
    recover: async (ctx) => {
      await ctx.node.proxy!.heal();
      ctx.endedAt = Date.now();
    },
    pending: async (ctx) => {
      if (o.force410 && relists(ctx) === relistsAt.get(ctx)) return 'the agent has not relisted its pods after a 410 yet';
      // Until the node's lease is renewed after the heal, the node controller may still mark its pods not Ready.
      const lease = await getJson<LeaseObject>(ctx, '-n', 'kube-node-lease', 'lease', ctx.node.nodeName);
      const renewed = lease?.spec?.renewTime ? Date.parse(lease.spec.renewTime) : 0;
      return renewed < (ctx.endedAt ?? 0) - 1000 ? 'the node lease has not been renewed since the heal' : undefined;
    },
    finalNotes: (ctx) => [podWatchNote(ctx, relistsAt.get(ctx) ?? 0)],
  };
}

export function etcdCompaction(pods: number): Fault {
  const relistsAt = new WeakMap<FaultContext, number>();
  return {
    id: 'etcd-compaction-steady-sim',
    title: (n) =>
      `etcd compacted to its current revision with ${n} pods from the apiserver running, then the agent's connections broken once (simulated runtime)`,
    moment: 'steady',
    node: { runtime: 'sim', pods, source: 'api' },
    inject: async (ctx) => {
      relistsAt.set(ctx, relists(ctx));
      const revision = await ctx.node.cluster!.compactEtcd();
      ctx.node.proxy!.breakConnections();
      ctx.notes.push(`compacted at revision ${revision}`);
    },
    recover: async () => undefined,
    finalNotes: (ctx) => [podWatchNote(ctx, relistsAt.get(ctx) ?? 0)],
  };
}
