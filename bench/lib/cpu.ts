/** CPU accounting for benchmarks, from /proc (Linux): whole machine, one process, top commands. */
import { readdirSync, readFileSync } from 'node:fs';
import { round } from './report.js';

const CLK_TCK = 100;
/** Busy CPU seconds of the whole machine (all cores) since boot. */
export function machineBusyS(): number {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal guest guest_nice: busy = user..softirq minus idle/iowait
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}
/**
 * Waits until the machine is quiet: busy below `maxBusy` (fraction of all
 * cores) over a `windowMs` sample, at most `timeoutMs`. For runs that follow
 * heavy ones (the kernel tears down hundreds of network namespaces for a
 * while after the pods are gone). Returns the last sample and the time waited.
 */
export async function waitQuiet(o: {
  cpus: number;
  maxBusy?: number;
  windowMs?: number;
  timeoutMs?: number;
}): Promise<{ busy: number; waitedS: number }> {
  const { cpus, maxBusy = 0.15, windowMs = 5000, timeoutMs = 300_000 } = o;
  const t0 = performance.now();
  for (;;) {
    const b0 = machineBusyS();
    await new Promise((r) => setTimeout(r, windowMs));
    const busy = (machineBusyS() - b0) / cpus / (windowMs / 1000);
    const waitedS = round((performance.now() - t0) / 1000, 1);
    if (!(busy > maxBusy) || performance.now() - t0 > timeoutMs) return { busy: round(busy, 2), waitedS };
  }
}
/** utime+stime (all threads) of a process in seconds; NaN when gone. */
export function procCpuS(pid: number | undefined, statPath = `/proc/${pid}/stat`): number {
  if (!pid) return Number.NaN;
  try {
    const stat = readFileSync(statPath, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}
/** utime+stime of one thread (`tid`) of a process in seconds; NaN when gone. The main thread's tid is the pid. */
export function threadCpuS(pid: number | undefined, tid = pid): number {
  if (!pid) return Number.NaN;
  return procCpuS(pid, `/proc/${pid}/task/${tid}/stat`);
}
let runtimePid: number | undefined;
/** The container runtime process whose CPU cpuStart() windows report as runtimeS. */
export function setRuntimePid(pid: number | undefined): void {
  runtimePid = pid;
}
export function containerdPid(): number | undefined {
  try {
    const run = process.env.KTS_CONTAINERD_RUN ?? '/run/kubelet-ts-containerd';
    return Number(readFileSync(`${run}/containerd.pid`, 'utf8').replace(/\D/g, '')) || undefined;
  } catch {
    return undefined;
  }
}
/** pid → [comm, own+reaped-children CPU seconds] for every process. */
export function procSnapshot(): Map<number, [string, number]> {
  const out = new Map<number, [string, number]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(d), [comm, (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK]);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}
/** CPU seconds by command name between two snapshots (processes that lived and died inside the window are missed unless reaped by a survivor). */
export function topComms(a: Map<number, [string, number]>, b: Map<number, [string, number]>, n = 6): Record<string, number> {
  const by = new Map<string, number>();
  for (const [pid, [comm, t]] of b) {
    const d = t - (a.get(pid)?.[1] ?? 0);
    if (d > 0) by.set(comm, (by.get(comm) ?? 0) + d);
  }
  return Object.fromEntries(
    [...by]
      .sort((x, y) => y[1] - x[1])
      .slice(0, n)
      .map(([k, v]) => [k, round(v, 2)]),
  );
}
export interface CpuWindow {
  machineBusyS: number;
  runtimeS: number;
  selfS: number;
  agentS?: number;
  /** The agent's CPU from its spawn, all threads and the main thread alone (the startup bench). */
  agentFromSpawnS?: number;
  agentMainFromSpawnS?: number;
  byCommand?: Record<string, number>;
}
export function cpuStart(agentPid?: number): () => CpuWindow {
  const snap = procSnapshot();
  const m = machineBusyS();
  const r = procCpuS(runtimePid);
  const me = process.cpuUsage();
  const a = procCpuS(agentPid);
  return () => {
    const self = process.cpuUsage(me);
    return {
      machineBusyS: round(machineBusyS() - m, 2),
      runtimeS: round(procCpuS(runtimePid) - r, 2),
      selfS: round((self.user + self.system) / 1e6, 2),
      ...(agentPid ? { agentS: round(procCpuS(agentPid) - a, 2) } : {}),
      byCommand: topComms(snap, procSnapshot()),
    };
  };
}

// ---------------------------------------------------------------- CRI helpers
