/** The faults of the suite, in the order the full run takes them, with their full-run sizes. */
import type { Fault } from './fault.js';
import { agentKillDuringStart } from './scenarios/agent-kill.js';
import { diskFault } from './scenarios/disk-full.js';
import { apiserverOutage, etcdCompaction } from './scenarios/apiserver.js';
import { leaseDeleted, nodeDeleted } from './scenarios/node-objects.js';
import { runtimeKillDuringStart, runtimeKillSteady } from './scenarios/runtime-kill.js';
import { workerCrashAimed, workerCrashDuringStart } from './scenarios/worker-crash.js';
import { runtimeSlowSteady } from './scenarios/runtime-slow.js';
import { agentKillDuringChurn } from './scenarios/agent-kill-churn.js';

export interface SuiteEntry {
  fault: Fault;
  /** Injections in a full run. */
  runs: number;
}

export function fullSuite(): SuiteEntry[] {
  return [
    { fault: agentKillDuringStart('sim', 500), runs: 10 },
    { fault: agentKillDuringStart('containerd', 100), runs: 10 },
    { fault: runtimeKillSteady(100), runs: 5 },
    { fault: runtimeKillDuringStart(100), runs: 10 },
    { fault: workerCrashDuringStart(500), runs: 10 },
    { fault: diskFault('full', 500, 30_000), runs: 5 },
    { fault: diskFault('log-dir-readonly', 500, 30_000), runs: 3 },
    { fault: apiserverOutage(100, { outageMs: 120_000, force410: false }), runs: 5 },
    { fault: apiserverOutage(100, { outageMs: 30_000, force410: true }), runs: 5 },
    { fault: apiserverOutage(50, { outageMs: 120_000, force410: false, runtime: 'containerd' }), runs: 5 },
    { fault: apiserverOutage(50, { outageMs: 30_000, force410: true, runtime: 'containerd' }), runs: 5 },
    { fault: etcdCompaction(100), runs: 5 },
    { fault: leaseDeleted(100), runs: 5 },
    { fault: nodeDeleted(50), runs: 3 },
    { fault: runtimeSlowSteady(500, { holdMs: 60_000, latencyMs: 5000, errorRate: 0.2, dropFraction: 0.2 }), runs: 3 },
    { fault: agentKillDuringChurn(500, { windowMs: 10_000, wave: 10 }), runs: 5 },
    { fault: workerCrashAimed('relist', 500), runs: 5 },
    { fault: workerCrashAimed('syncPod', 500), runs: 5 },
    { fault: workerCrashAimed('inspect', 500), runs: 5 },
  ];
}
