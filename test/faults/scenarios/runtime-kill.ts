/**
 * containerd killed with SIGKILL with every pod running (its shims and
 * containers live on, as after a real crash) and started again at once on
 * its old state; the agent keeps running throughout. Always a private
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
