/**
 * SVG charts written beside benchmark results (bench/results/*.svg), from the
 * same rows as the JSON, so `npm run bench -- charts` can redraw them from the
 * committed JSON without running anything. The start-up CDF helper is shared
 * with any benchmark that has per-pod start-up times (startup, peer).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCdfSvg, renderChartSvg, type Series } from '../../src/compare/svg-chart.js';
import { RESULTS_DIR } from './report.js';

export function writeChart(file: string, svg: string): string {
  const path = join(RESULTS_DIR, file);
  writeFileSync(path, svg);
  console.log(`wrote ${path}`);
  return path;
}

export interface PlegRow {
  pods: number;
  scenario: string;
  mode: string;
  p50Ms: number;
  p99Ms: number;
}

/** The chart subtitle of a pleg run. */
export function plegChartSetup(threads: number, simLatency: string, machine: { date?: string; loadavg?: number[] }): string {
  return `kubelet-ts-sim in a child process, per-call latency ${simLatency}; ${threads} worker threads; ${runNote(machine)}`;
}

/** "one run on 2026-11-22, load 1.9": when the numbers were taken and how busy the machine was. */
export function runNote(machine: { date?: string; loadavg?: number[] }): string {
  return `one run${machine.date ? ` on ${machine.date.slice(0, 10)}` : ''}${machine.loadavg ? `, load ${machine.loadavg[0]}` : ''}`;
}

/** One line per mode over pods, for one scenario and one statistic. */
function seriesByMode(rows: readonly PlegRow[], scenario: string, stat: 'p50Ms' | 'p99Ms'): Series[] {
  const modes = [...new Set(rows.filter((r) => r.scenario === scenario).map((r) => r.mode))];
  return modes.map((mode) => ({
    name: mode,
    points: rows
      .filter((r) => r.scenario === scenario && r.mode === mode)
      .sort((a, b) => a.pods - b.pods)
      .map((r) => ({ x: r.pods, y: r[stat] })),
  }));
}

/** pleg-relist-p99.svg (steady relist p99 against pods, per mode) and pleg-churn.svg (100% churn p50). */
export function writePlegCharts(rows: readonly PlegRow[], setup: string): string[] {
  return [
    writeChart(
      'pleg-relist-p99.svg',
      renderChartSvg({
        title: 'PLEG relist p99 at steady state, by mode',
        subtitle: setup,
        xLabel: 'pods (2 containers each, log scale)',
        yLabel: 'relist p99 (ms, log scale)',
        xType: 'log',
        yType: 'log',
        series: seriesByMode(rows, 'steady', 'p99Ms'),
      }),
    ),
    writeChart(
      'pleg-churn.svg',
      renderChartSvg({
        title: 'PLEG relist p50 with every pod churned between relists, by mode',
        subtitle: setup,
        xLabel: 'pods (2 containers each)',
        yLabel: 'relist p50 (ms, log scale)',
        yType: 'log',
        series: seriesByMode(rows, 'churn 100%', 'p50Ms'),
      }),
    ),
  ];
}

/** A start-up CDF chart: one line per agent (or path) of per-pod start-up times in ms. */
export function writeStartupCdf(
  file: string,
  title: string,
  subtitle: string,
  series: { name: string; values: readonly number[] }[],
): string {
  return writeChart(file, renderCdfSvg({ title, subtitle, xLabel: 'pod start-up (ms)', series }));
}

/** The figures of one peer-bench run that the charts draw (a raw CRI run has no steady window). */
export interface PeerChartRun {
  agent: string;
  pods: number;
  spawnRunningS: number;
  steady?: { relistMeanMs: number; relistP99Ms: number };
  churn?: { convergedS: number };
  error?: string;
}

const PEER_NAMES: Record<string, string> = { go: 'Go kubelet 1.20.2', ts: 'kubelet-ts', raw: 'raw CRI' };

/** Mean over the rounds of one agent at one size (NaN-free: failed runs are left out); agents with no such figure have no line. */
function peerSeries(runs: readonly PeerChartRun[], label: string, pick: (r: PeerChartRun) => number | undefined): Series[] {
  const agents = [...new Set(runs.map((r) => r.agent))];
  return agents
    .map((agent) => {
      const sizes = [...new Set(runs.filter((r) => r.agent === agent).map((r) => r.pods))].sort((a, b) => a - b);
      const points = sizes.flatMap((pods) => {
        const vals = runs
          .filter((r) => r.agent === agent && r.pods === pods && !r.error)
          .map(pick)
          .filter((v): v is number => v !== undefined && Number.isFinite(v));
        return vals.length ? [{ x: pods, y: vals.reduce((a, b) => a + b, 0) / vals.length }] : [];
      });
      return { name: `${PEER_NAMES[agent] ?? agent} ${label}`, points };
    })
    .filter((s) => s.points.length > 0);
}

/** peer-relist.svg (steady relist mean and p99 against pods) and peer-spawn.svg (spawn → running, churn convergence). */
export function writePeerCharts(runs: readonly PeerChartRun[], machine: { date?: string; loadavg?: number[] }): string[] {
  const setup = `same containerd, N static sleep pods, mean over rounds in both orders; ${runNote(machine)}`;
  return [
    writeChart(
      'peer-relist.svg',
      renderChartSvg({
        title: 'Steady PLEG relist latency: kubelet-ts and the Go kubelet',
        subtitle: setup,
        xLabel: 'pods',
        yLabel: 'relist duration (ms, from each agent’s /metrics)',
        series: [...peerSeries(runs, 'mean', (r) => r.steady?.relistMeanMs), ...peerSeries(runs, 'p99', (r) => r.steady?.relistP99Ms)],
      }),
    ),
    writeChart(
      'peer-spawn.svg',
      renderChartSvg({
        title: `Spawn and full churn: kubelet-ts and the Go kubelet${runs.some((r) => r.agent === 'raw') ? ' (raw CRI: the floor)' : ''}`,
        subtitle: setup,
        xLabel: 'pods',
        yLabel: 'seconds',
        series: [
          ...peerSeries(runs, 'spawn → all running (CRI)', (r) => r.spawnRunningS),
          ...peerSeries(runs, 'full churn → converged', (r) => r.churn?.convergedS),
        ],
      }),
    ),
  ];
}
