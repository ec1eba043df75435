/**
 * containerd killed with SIGKILL (its shims and containers live on, as after
 * a real crash) and started again at once on its old state; the agent keeps
 * running throughout. Steady: with every pod running. During start: at a
 * random moment while the pods start, so calls in flight (RunPodSandbox,
 * CreateContainer, StartContainer) are cut off mid-way. Always a private
 * containerd (test/helpers/private-containerd.ts), never the shared one.
 */
import type { Fault } from '../fault.js';

export function runtimeKillSteady(pods: number): Fault {
  return {
    id: 'runtime-kill-steady-containerd',
    title: (n) => `containerd SIGKILL and restart with ${n} pods running`,
    moment: 'steady',
    node: { runtime: 'containerd', pods },
    inject: async ({ runtime }) => runtime!.kill(),
    recover: async ({ runtime }) => runtime!.start(),
  };
}

export function runtimeKillDuringStart(pods: number): Fault {
  return {
    id: 'runtime-kill-start-containerd',
    title: (n) => `containerd SIGKILL during the start of ${n} pods, restarted at once; the agent runs throughout`,
    moment: 'start',
    // The runtime cannot be listed once killed: what ran is read just before.
    baselineBeforeInject: true,
    node: { runtime: 'containerd', pods },
    inject: async ({ runtime }) => runtime!.kill(),
    recover: async ({ runtime }) => runtime!.start(),
  };
}
