/** The peer benchmark's markdown report (bench/peer.bench.ts writes the JSON). */
import type { AgentRun } from '../peer.bench.js';
import { round } from './report.js';

interface Figure {
  name: string;
  value: (r: AgentRun) => number | undefined;
  /** The Done-when bound on ts / go, where the issue sets one. */
  target?: { n: number[]; max: number };
}

const FIGURES: Figure[] = [
  { name: 'spawn → N running, CRI (s)', value: (r) => r.spawnRunningS, target: { n: [100, 250], max: 0.6 } },
  { name: 'spawn → N Running in /pods (s)', value: (r) => r.spawnReportedS },
  { name: 'steady relist mean (ms)', value: (r) => r.steady?.relistMeanMs, target: { n: [250], max: 0.8 } },
  { name: 'steady relist p99 (ms)', value: (r) => r.steady?.relistP99Ms, target: { n: [250], max: 0.8 } },
  { name: 'steady relists in window', value: (r) => r.steady?.relistCount },
  { name: 'steady CPU (cores)', value: (r) => r.steady?.cpuCores },
  { name: 'RSS at steady state (MiB)', value: (r) => r.rssMiB, target: { n: [250], max: 1 } },
  { name: 'peak RSS (MiB)', value: (r) => r.hwmMiB },
  { name: 'churn: converged (s)', value: (r) => r.churn?.convergedS, target: { n: [250], max: 0.5 } },
  { name: 'churn: runtime converged (s)', value: (r) => r.churn?.runtimeConvergedS },
  { name: 'churn: relist mean (ms)', value: (r) => r.churn?.window.relistMeanMs },
  { name: 'churn: relist p99 (ms)', value: (r) => r.churn?.window.relistP99Ms },
  { name: 'churn: CPU (cores)', value: (r) => r.churn?.window.cpuCores },
];

const fmt = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '–' : String(v));

/** Pairs of (go, ts) runs of one size and round. */
function pairs(runs: readonly AgentRun[]): { n: number; round: number; go?: AgentRun; ts?: AgentRun }[] {
  const out = new Map<string, { n: number; round: number; go?: AgentRun; ts?: AgentRun }>();
  for (const r of runs) {
    const k = `${r.pods}/${r.round}`;
    const p = out.get(k) ?? { n: r.pods, round: r.round };
    p[r.agent] = r;
    out.set(k, p);
  }
  return [...out.values()];
}

export function peerMarkdown(runs: readonly AgentRun[], meta: Record<string, unknown>): string {
  const L: string[] = ['# Peer benchmark: kubelet-ts vs the Go kubelet v1.20.2', ''];
  L.push(`Machine: ${JSON.stringify(meta.machine)}`, '');
  L.push(
    'Standalone, static pods (one container each) on the same containerd, one agent at a time; a round runs the two in one order, ' +
      'the next in the other. Spawn times are seen through CRI and through each agent’s /pods; relist figures come from each agent’s own ' +
      '`kubelet_pleg_relist_duration_seconds` over the window (p99 interpolated in upstream’s buckets). Churn replaces every manifest at once. ' +
      `Steady window ${String(meta.steadyS)} s after all pods are Running plus ${String(meta.settleS)} s. Ratios are ts / go within one round.`,
    '',
  );
  for (const p of pairs(runs)) {
    const order = [p.go, p.ts].filter((r): r is AgentRun => !!r).sort((a, b) => a.position - b.position);
    L.push(`## ${p.n} pods, round ${p.round} (${order.map((r) => r.agent).join(' → ')})`, '');
    for (const r of order) {
      if (r.error) L.push(`**${r.agent} failed:** ${r.error.split('\n')[0]}`, '');
    }
    L.push('| figure | Go kubelet | kubelet-ts | ts / go | target |', '|---|---:|---:|---:|---|');
    for (const f of FIGURES) {
      const g = p.go && f.value(p.go);
      const t = p.ts && f.value(p.ts);
      const ratio = g && t !== undefined && !Number.isNaN(g) && !Number.isNaN(t) ? round(t / g, 2) : undefined;
      const target = f.target?.n.includes(p.n)
        ? `≤ ${f.target.max}${ratio !== undefined ? (ratio <= f.target.max ? ' met' : ' **missed**') : ''}`
        : '';
      L.push(`| ${f.name} | ${fmt(g)} | ${fmt(t)} | ${fmt(ratio)} | ${target} |`);
    }
    const load = order.map((r) => `${r.agent} ${r.loadavgStart.join('/')} → ${r.loadavgEnd.join('/')}`).join('; ');
    L.push('', `Load average (1/5/15 min) at start → end: ${load}.`, '');
    const calls = (r: AgentRun | undefined) =>
      r?.startupCallsPerPod
        ? Object.entries(r.startupCallsPerPod)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')
        : '–';
    L.push(`CRI calls per pod from spawn to all reported: go: ${calls(p.go)}; ts: ${calls(p.ts)}.`, '');
    const steadyCalls = (r: AgentRun | undefined) =>
      r?.steady
        ? Object.entries(r.steady.runtimeCalls)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')
        : '–';
    L.push(`CRI calls in the steady window: go: ${steadyCalls(p.go)}; ts: ${steadyCalls(p.ts)}.`, '');
    const phases = p.ts?.steady?.relistPhases;
    if (phases) {
      L.push(
        `kubelet-ts relist phases in the steady window (mean / p99 ms): ${Object.entries(phases)
          .map(([k, v]) => `${k} ${v.meanMs} / ${v.p99Ms} (${v.count})`)
          .join(', ')}.`,
        '',
      );
    }
  }
  L.push(`Run: \`${String(meta.command)}\``);
  return L.join('\n');
}
