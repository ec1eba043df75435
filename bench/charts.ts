/**
 * Redraws the benchmark charts from the committed results JSON, without
 * running a benchmark: `npm run bench -- charts`. pleg.json gives
 * pleg-relist-p99.svg and pleg-churn.svg; startup.json (when it has per-pod
 * times) gives startup-cdf-<runtime>.svg.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plegChartSetup, writePlegCharts, type PlegRow } from './lib/charts.js';
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

const startup = read<{ results: ScenarioResult[]; machine: { date?: string; loadavg?: number[] } }>('startup.json');
if (startup?.results.some((r) => r.agent.perPodMs)) writeStartupCharts(startup.results, 'startup', startup.machine);
else console.log('startup.json has no per-pod times (written before they were kept): run npm run bench -- startup');
