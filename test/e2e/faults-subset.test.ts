/**
 * The fault suite's CI subset (the full suite is `npm run faults`, its figures
 * in docs/reliability.md): each fault injected twice at random moments, with
 * small nodes (60 pods on the sim, 15 on containerd) and 3 relists of settling, and every invariant asserted — no pod lost, no duplicate
 * sandbox or running container (at the end or seen while recovering), no
 * healthy container restarted, no terminated pod run again, /pods consistent
 * with the runtime within a generous deadline, the agent's RSS and fds back
 * within the suite's bound. Figures are not asserted. The containerd faults
 * use a private containerd (pod network 10.188.0.0/16, or the first octet of
 * KTS_FAULT_OCTETS). Every recovery must hold 2 s (the suite's default is 5 s:
 * CI keeps it short). KTS_FAULT_SEED fixes
 * the injection moments (the seed is in every failure message). Also, once
 * each: the root and log dirs full for 10 s during a start (the invariants,
 * plus one report per cause, not per pod) and the subPath escape on a real
 * agent (test/faults/subpath-escape.ts).
 *
 * The apiserver case (with the cluster suite: KTS_E2E_CLUSTER=1 or CI=true)
 * runs once on a private control plane of its own (the shared one is never
 * restarted or compacted): 20 pods from the apiserver, the agent cut off for
 * 10 s while 2 pods are deleted, etcd compacted and the apiserver restarted, so
 * the agent's watch gets 410 Gone; the agent must relist, stop exactly the
 * deleted pods and have the apiserver's statuses (Ready too) right again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { PrivateContainerd } from '../helpers/private-containerd.js';
import { containerdControl } from '../faults/containerd-control.js';
import type { Fault, RuntimeControl } from '../faults/fault.js';
import { PrivateControlPlane } from '../faults/private-control-plane.js';
import { faultOctets } from '../faults/octets.js';
import { runFault } from '../faults/runner.js';
import { agentKillDuringStart } from '../faults/scenarios/agent-kill.js';
import { apiserverOutage } from '../faults/scenarios/apiserver.js';
import { runtimeKillSteady } from '../faults/scenarios/runtime-kill.js';
import { workerCrashDuringStart } from '../faults/scenarios/worker-crash.js';
import { diskFault } from '../faults/scenarios/disk-full.js';
import { subPathEscapeCheck } from '../faults/subpath-escape.js';
import { CLUSTER_ENABLED } from './cluster-env.js';
import { describeE2E } from './e2e-env.js';

const SEED = Number(process.env.KTS_FAULT_SEED ?? Math.floor(Math.random() * 1e6));

describeE2E('fault suite, CI subset', () => {
  const containerd = new PrivateContainerd(`fci${randomUUID().slice(0, 4)}`, faultOctets([188])[0]);
  let runtime: RuntimeControl | undefined;
  /** The private containerd, brought up by the first case that needs it (the sim and apiserver cases do not). */
  const containerdRuntime = async (): Promise<RuntimeControl> => {
    if (!runtime) {
      await containerd.up();
      runtime = containerdControl(containerd);
    }
    return runtime;
  };

  afterAll(async () => {
    if (runtime) await containerd.down();
  });

  const check = async (fault: Fault, pods: number, o: { withRuntime?: boolean; cluster?: PrivateControlPlane; runs?: number } = {}) => {
    const lines: string[] = [];
    const runs = o.runs ?? 2;
    const result = await runFault(fault, {
      runs,
      seed: SEED,
      pods,
      recoveryDeadlineMs: 120_000,
      settleRelists: 3,
      holdMs: 2000,
      runtime: o.withRuntime ? await containerdRuntime() : undefined,
      cluster: o.cluster,
      log: (l) => lines.push(l),
    });
    const clean = {
      recovered: true,
      lost: 0,
      duplicates: 0,
      duplicatesSeen: 0,
      healthyRestarted: 0,
      terminatedRestarted: 0,
      deletedRunning: 0,
      otherBroken: 0,
      usageOk: true,
    };
    expect(result.runs).toHaveLength(runs);
    for (const r of result.runs) {
      const got = {
        recovered: r.recovered,
        lost: r.lost,
        duplicates: r.duplicates,
        duplicatesSeen: r.duplicatesSeen,
        healthyRestarted: r.healthyRestarted,
        terminatedRestarted: r.terminatedRestarted,
        deletedRunning: r.deletedRunning ?? 0,
        otherBroken: r.otherBroken ?? 0,
        usageOk: r.usageOk,
      };
      expect(got, `seed ${SEED}, run ${r.run}:\n${lines.join('\n')}`).toEqual(clean);
    }
  };

  it('agent SIGKILL during the start of 60 pods on the embedded sim: the next agent adopts them', async () => {
    await check(agentKillDuringStart('sim', 60), 60);
  });

  it('every worker thread terminated during the start of 60 pods: the agent recovers on its own', async () => {
    await check(workerCrashDuringStart(60), 60);
  });

  it('agent SIGKILL during the start of 15 pods on containerd', async () => {
    await check(agentKillDuringStart('containerd', 15), 15, { withRuntime: true });
  });

  it('containerd SIGKILL and restart with 15 pods running', async () => {
    await check(runtimeKillSteady(15), 15, { withRuntime: true });
  });

  it('root and log dirs full for 10 s during the start of 60 pods: pods kept, one report per cause, all started after', async () => {
    const fault = diskFault('full', 60, 10_000);
    await check(fault, 60, { runs: 1 });
    const [r] = fault.reports;
    // A report per pod would put at least one line per pod that hit the full disk under one message.
    expect(r.maxSameMessage, JSON.stringify(r)).toBeLessThanOrEqual(Math.ceil(r.holdMs / 10_000) + 2);
    expect(r.cleared, JSON.stringify(r)).toEqual(r.causes);
  });

  it('a subPath out of its volume (a symlink, "..") is refused with a clear error; nothing is bound outside; other pods run', async () => {
    await subPathEscapeCheck();
  });

  it.skipIf(!CLUSTER_ENABLED)(
    'apiserver outage with 410: 20 pods from the apiserver, 2 deleted while the agent is cut off, watch expired',
    async () => {
      const cluster = new PrivateControlPlane();
      try {
        await cluster.up();
        await check(apiserverOutage(20, { outageMs: 10_000, force410: true }), 20, { cluster, runs: 1 });
      } finally {
        await cluster.down();
      }
    },
  );
});
