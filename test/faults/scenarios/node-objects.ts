/**
 * The node's own objects deleted by an operator, on a node whose pods come from
 * the suite's private control plane:
 *
 * - lease: `kubectl delete lease -n kube-node-lease NODE`. Upstream's lease
 *   controller renews every 10 s and creates the lease again when it is gone; the
 *   run recovers when a lease held by the node, renewed after the deletion, exists.
 *   The pods are not touched.
 * - node: `kubectl delete node NODE`. Upstream v1.20.2 registers once per process
 *   (registerWithAPIServer returns at once when registrationCompleted), so its
 *   status updates fail with "error getting node" until it is restarted; the pod
 *   GC controller deletes the pods bound to the missing node (after its 40 s
 *   quarantine) and the kubelet stops them. The fault checks that the Node is
 *   not created again while the agent runs, waits for every pod to be deleted and
 *   stopped, then restarts the agent (what an operator does) and recovers when
 *   the Node is registered again and Ready. Each run takes a fresh node.
 */
import { pollUntil } from '../../helpers/poll.js';
import type { Fault, FaultContext } from '../fault.js';

export interface LeaseObject {
  metadata: { uid: string };
  spec?: { holderIdentity?: string; renewTime?: string };
}

interface NodeObject {
  metadata: { uid: string };
  status?: { conditions?: { type: string; status: string }[] };
}

export async function getJson<T>(ctx: FaultContext, ...args: string[]): Promise<T | undefined> {
  try {
    return JSON.parse(await ctx.node.cluster!.kubectl('get', ...args, '-o', 'json')) as T;
  } catch (err) {
    if (/NotFound|not found/.test((err as Error).message)) return undefined;
    throw err;
  }
}

export function leaseDeleted(pods: number): Fault {
  const deleted = new WeakMap<FaultContext, { at: number; uid: string }>();
  return {
    id: 'lease-delete-steady-sim',
    title: (n) => `the node's Lease deleted by an operator, with ${n} pods from the apiserver running (simulated runtime)`,
    moment: 'steady',
    node: { runtime: 'sim', pods, source: 'api' },
    inject: async (ctx) => {
      // The first lease comes at the renewal after the Node exists (it is owned by it), up to 10 s after registering.
      const lease = await pollUntil(
        'the node lease',
        () => getJson<LeaseObject>(ctx, '-n', 'kube-node-lease', 'lease', ctx.node.nodeName),
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      await ctx.node.cluster!.kubectl('-n', 'kube-node-lease', 'delete', 'lease', ctx.node.nodeName);
      deleted.set(ctx, { at: Date.now(), uid: lease.metadata.uid });
    },
    recover: async () => undefined,
    pending: async (ctx) => {
      const was = deleted.get(ctx)!;
      const lease = await getJson<LeaseObject>(ctx, '-n', 'kube-node-lease', 'lease', ctx.node.nodeName);
      if (!lease) return 'no lease yet';
      if (lease.metadata.uid === was.uid) return 'the old lease is still there';
      if (lease.spec?.holderIdentity !== ctx.node.nodeName) return `lease held by ${lease.spec?.holderIdentity}`;
      // renewTime has microseconds; the deletion time is from this clock (same machine).
      if (!lease.spec?.renewTime || Date.parse(lease.spec.renewTime) < was.at - 1000) return 'lease not renewed since the deletion';
      if (!ctx.notes.length) ctx.notes.push(`lease back after ${((Date.now() - was.at) / 1000).toFixed(1)} s`);
      return undefined;
    },
  };
}

/** How long the agent must leave the Node deleted (at least): over 4 of its 10 s status updates. */
const NO_REGISTER_WINDOW_MS = 45_000;
const PODS_GONE_DEADLINE_MS = 240_000;

export function nodeDeleted(pods: number): Fault {
  const deletedAt = new WeakMap<FaultContext, number>();
  return {
    id: 'node-delete-steady-sim',
    title: (n) =>
      `the Node object deleted by an operator, with ${n} pods from the apiserver running; the agent restarted after the pod GC removed its pods (simulated runtime)`,
    moment: 'steady',
    fresh: true,
    node: { runtime: 'sim', pods, source: 'api' },
    inject: async (ctx) => {
      await ctx.node.cluster!.kubectl('delete', 'node', ctx.node.nodeName, '--wait=false');
      deletedAt.set(ctx, Date.now());
      // The pod GC deletes every pod bound to a missing node: none may run afterwards.
      for (const p of ctx.node.workload.pods) p.kind = 'gone';
    },
    recover: async (ctx) => {
      const { node } = ctx;
      const at = deletedAt.get(ctx)!;
      const ns = node.workload.namespace;
      let podsGoneAfter: number | undefined;
      let runtimeClearAfter: number | undefined;
      for (;;) {
        const since = Date.now() - at;
        if (await getJson<NodeObject>(ctx, 'node', node.nodeName)) {
          ctx.broken.push(`the Node was created again ${(since / 1000).toFixed(1)} s after its deletion, without a restart`);
          break;
        }
        if (podsGoneAfter === undefined) {
          const left = (JSON.parse(await node.cluster!.kubectl('-n', ns, 'get', 'pods', '-o', 'json')) as { items: unknown[] }).items;
          if (left.length === 0) podsGoneAfter = since;
        }
        if (podsGoneAfter !== undefined && runtimeClearAfter === undefined) {
          const view = await node.runtimeView();
          if (!view.sandboxes.some((s) => s.ready) && !view.containers.some((c) => c.running)) runtimeClearAfter = since;
        }
        if (runtimeClearAfter !== undefined && since >= NO_REGISTER_WINDOW_MS) break;
        if (since > PODS_GONE_DEADLINE_MS) {
          ctx.broken.push(
            podsGoneAfter === undefined
              ? 'the pod GC had not deleted the pods in 240 s'
              : 'the agent had not stopped the deleted pods in 240 s',
          );
          break;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      const notFound = node.agent.logs.filter((l) => /nodes? .*not found|error getting node/i.test(l)).length;
      ctx.notes.push(
        `pods deleted by the pod GC after ${podsGoneAfter !== undefined ? (podsGoneAfter / 1000).toFixed(1) : '?'} s, ` +
          `stopped by the agent after ${runtimeClearAfter !== undefined ? (runtimeClearAfter / 1000).toFixed(1) : '?'} s; ` +
          `Node not registered again for ${((Date.now() - at) / 1000).toFixed(1)} s (${notFound} log lines of the missing node)`,
      );
      const healthy = await fetch(`http://127.0.0.1:${node.agent.healthzPort}/healthz`)
        .then((r) => r.ok)
        .catch(() => false);
      if (!healthy) ctx.broken.push('the agent stopped answering /healthz while its Node was missing');
      await node.agent.stop();
      await node.agent.start();
    },
    pending: async (ctx) => {
      const n = await getJson<NodeObject>(ctx, 'node', ctx.node.nodeName);
      if (!n) return 'the Node is not registered again yet';
      if (n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') return 'the Node is not Ready yet';
      return undefined;
    },
  };
}
