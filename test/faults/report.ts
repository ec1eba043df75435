/**
 * The suite's results file (bench/results/faults.json: the last run of each
 * fault, merged by fault id so a filtered run keeps the others) and the
 * table it writes into docs/reliability.md, between two marker lines (the
 * prose around them is hand-written).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { FaultResult, RunRecord } from './runner.js';
import { mib, USAGE_BOUND } from './proc-usage.js';

export interface RecordedFault extends FaultResult {
  date: string;
  command: string;
  machine: { cpus: number; loadavg: number[]; node: string };
  /** Whether other work ran on the machine meanwhile (said in the docs). */
  sharedMachine: boolean;
}

export interface ResultsFile {
  faults: Record<string, RecordedFault>;
}

export function machineInfo(): RecordedFault['machine'] {
  return { cpus: os.cpus().length, loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100), node: process.version };
}

export function readResults(path: string): ResultsFile {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as ResultsFile) : { faults: {} };
}

export function mergeResults(file: ResultsFile, recorded: RecordedFault[]): ResultsFile {
  const faults = { ...file.faults };
  for (const r of recorded) faults[r.id] = r;
  return { faults };
}

export const BEGIN = '<!-- BEGIN fault table: written by `npm run faults` from bench/results/faults.json; do not edit -->';
export const END = '<!-- END fault table -->';

const s = (ms: number) => (ms / 1000).toFixed(1);

function percentile(values: number[], p: number): number {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1))];
}

const sum = (runs: RunRecord[], k: keyof RunRecord) => runs.reduce((n, r) => n + Number(r[k] ?? 0), 0);

/** The hold window and the passing streaks that broke before one held ("no hold" for records taken before it). */
function holdCell(runs: RunRecord[]): string {
  const windows = [...new Set(runs.map((r) => r.holdMs).filter((h) => h !== undefined))];
  if (windows.length === 0) return 'no hold';
  return `${windows.map((h) => s(h)).join(', ')} / ${sum(runs, 'brokeAfterFirstPass')}`;
}

/** The summary row of one fault: an armed fault that never hit is not counted as recovered (nor in the times). */
export function summaryRow(f: RecordedFault): string {
  const recovered = f.runs.filter((r) => r.recovered && !r.missed);
  const missed = f.runs.filter((r) => r.missed).length;
  const times = recovered.map((r) => r.recoveryMs);
  const usageOk = f.runs.filter((r) => r.usageOk).length;
  return [
    `\`${f.id}\`: ${f.title}`,
    f.runs.length,
    `${recovered.length}/${f.runs.length}${missed ? ` (${missed} never hit)` : ''}`,
    sum(f.runs, 'lost'),
    `${sum(f.runs, 'duplicates')} / ${Math.max(0, ...f.runs.map((r) => r.duplicatesSeen))}`,
    sum(f.runs, 'healthyRestarted'),
    sum(f.runs, 'terminatedRestarted'),
    sum(f.runs, 'deletedRunning'),
    sum(f.runs, 'otherBroken'),
    sum(f.runs, 'startsInterrupted'),
    times.length ? `${s(percentile(times, 50))} / ${s(Math.max(...times))}` : 'n/a',
    holdCell(f.runs),
    `${usageOk}/${f.runs.length}`,
    `${f.date.slice(0, 16).replace('T', ' ')}${f.sharedMachine ? ' (shared)' : ''}`,
  ].join(' | ');
}

function runRows(f: RecordedFault): string[] {
  return f.runs.map((r) =>
    [
      r.run,
      r.injectedAfterMs ?? '',
      r.runningAtInjection,
      recoveryCell(r),
      r.holdMs === undefined ? 'no hold' : `${s(r.holdMs)} / ${r.brokeAfterFirstPass ?? 0}`,
      r.lost,
      `${r.duplicates} / ${r.duplicatesSeen}`,
      r.healthyRestarted,
      r.terminatedRestarted,
      r.deletedRunning ?? 0,
      r.otherBroken ?? 0,
      r.startsInterrupted,
      r.usageBefore && r.usageAfter
        ? `${mib(r.usageBefore.rssBytes)} → ${mib(r.usageAfter.rssBytes)} MiB, ${r.usageBefore.fds} → ${r.usageAfter.fds} fds${r.usageOk ? '' : ' **over**'}`
        : 'no sample',
      r.details.length ? orderDetails(r.details).join('; ').replaceAll('|', '\\|').slice(0, 400) : '',
    ].join(' | '),
  );
}

function recoveryCell(r: RunRecord): string {
  if (r.missed) return `never hit (${s(r.recoveryMs)} from arming, not counted)`;
  const t = r.recovered ? s(r.recoveryMs) : `not within ${s(r.recoveryMs)}`;
  const first = r.brokeAfterFirstPass && r.firstPassMs !== undefined ? `, first pass ${s(r.firstPassMs)}` : '';
  return r.hitAfterMs !== undefined
    ? `${t} from the hit (arming → hit ${s(r.hitAfterMs)}${first})`
    : first
      ? `${t} (${first.slice(2)})`
      : t;
}

/** Broken invariants first, then where the agent's log is, then notes (restart counts after a cut-off start). */
function orderDetails(details: string[]): string[] {
  const rank = (d: string) => (d.includes('restartCount') ? 2 : d.startsWith('agent log') ? 1 : 0);
  return [...details].sort((a, b) => rank(a) - rank(b));
}

export function renderTable(file: ResultsFile, order: string[]): string {
  const faults = [...Object.values(file.faults)].sort((a, b) => rank(order, a.id) - rank(order, b.id));
  const out = [
    BEGIN,
    '',
    '| fault | injected | recovered | pods lost | duplicates (end / most seen) | healthy containers restarted | terminated pods restarted | deleted pods left running | other checks broken | starts cut off (container never started) | recovery p50 / max (s) | hold (s) / broke after first pass | RSS and fds within bound | run (UTC) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...faults.map((f) => `| ${summaryRow(f)} |`),
    '',
    `Bound: RSS at most the level before the fault plus max(${USAGE_BOUND.rssRatio * 100} %, ${mib(USAGE_BOUND.rssSlackBytes)} MiB), open descriptors at most ${USAGE_BOUND.fdSlack} more.`,
  ];
  for (const f of faults) {
    out.push(
      '',
      `### \`${f.id}\``,
      '',
      `${f.title}. ${f.runs.length} runs, \`${f.command}\`, ${f.date}; ${f.machine.cpus} CPUs, load ${f.machine.loadavg.join(' ')} at the end${f.sharedMachine ? ', machine shared with other work' : ''}.` +
        (f.startWindowMs !== undefined ? ` Start window (reference run, /healthz → all pods Running): ${s(f.startWindowMs)} s.` : ''),
      '',
      '| run | hit at (ms after /healthz) | sandboxes + containers running when hit | recovery (s) | hold (s) / broke after first pass | lost | duplicates (end / seen) | healthy restarted | terminated restarted | deleted left running | other checks broken | starts cut off | RSS, fds (before → after) | details |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
      ...runRows(f).map((r) => `| ${r} |`),
    );
  }
  out.push('', END);
  return out.join('\n');
}

function rank(order: string[], id: string): number {
  const i = order.indexOf(id);
  return i < 0 ? order.length : i;
}

/** Replaces the marked section of the doc (appends it when the markers are missing). */
export function writeDocTable(docPath: string, table: string): void {
  const doc = existsSync(docPath) ? readFileSync(docPath, 'utf8') : '';
  const b = doc.indexOf(BEGIN);
  const e = doc.indexOf(END);
  const next = b >= 0 && e > b ? `${doc.slice(0, b)}${table}${doc.slice(e + END.length)}` : `${doc.trimEnd()}\n\n${table}\n`;
  writeFileSync(docPath, next);
}
