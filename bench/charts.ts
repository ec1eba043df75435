/**
 * Redraws the benchmark charts from the committed results JSON, without
 * running a benchmark: `npm run bench -- charts`. pleg.json gives
 * pleg-relist-p99.svg and pleg-churn.svg; each startup*.json with per-pod
 * times gives <name>-cdf-<runtime>.svg; peer.json gives peer-relist.svg and
 * peer-spawn.svg.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plegChartSetup, writePeerCharts, writePlegCharts, type PeerChartRun, type PlegRow } from './lib/charts.js';
import { RESULTS_DIR } from './lib/report.js';
import { writeStartupCharts } from './lib/startup-report.js';
import type { ScenarioResult } from './startup.bench.js';

const read = <T>(name: string): T | undefined => {
  const f = join(RESULTS_DIR, name);
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as T) : undefined;
};

const pleg = read<{ rows: PlegRow[]; threads: number; simLatency: string; machine: { date?: string; loadavg?: number[] } }>('pleg.json');
if (pleg) writePlegCharts(pleg.rows, plegChartSetup(pleg.threads, pleg.simLatency, pleg.machine));
else console.log('no pleg.json: run npm run bench -- pleg');

// startup.json and any other startup run kept under its own name (startup-loaded.json, …).
const startups = readdirSync(RESULTS_DIR).filter((f) => /^startup.*\.json$/.test(f));
for (const f of startups) {
  const run = read<{ results: ScenarioResult[]; machine: { date?: string; loadavg?: number[] } }>(f)!;
  if (run.results.some((r) => r.agent.perPodMs)) writeStartupCharts(run.results, f.replace(/\.json$/, ''), run.machine);
  else console.log(`${f} has no per-pod times (written before they were kept): rerun npm run bench -- startup`);
}

const peer = read<{ runs: PeerChartRun[]; machine: { date?: string; loadavg?: number[] } }>('peer.json');
if (peer) writePeerCharts(peer.runs, peer.machine);
else console.log('no peer.json: run npm run bench -- peer');
