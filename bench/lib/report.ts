/** Shared benchmark helpers: percentiles, machine info and result files. */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Bench } from 'tinybench';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A progress line with the wall-clock time (hh:mm:ss.mmm, UTC). */
export const log = (msg: string): void => console.log(`[${new Date().toISOString().slice(11, 23)}] ${msg}`);

export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function machine(): Record<string, unknown> {
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    loadavg: loadavg().map((l) => round(l)),
    date: new Date().toISOString(),
  };
}

export function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

/** Writes <name>.json and <name>.md under bench/results. */
export function writeResults(name: string, json: unknown, markdown: string): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, `${name}.md`), markdown.endsWith('\n') ? markdown : `${markdown}\n`);
  console.log(`wrote ${join(RESULTS_DIR, `${name}.json`)} and .md`);
}

export type TaskRow =
  { name: string; opsPerSec: number; meanNs: number; p50Ns: number; p99Ns: number; samples: number } | { name: string; state: string };

/** One row per tinybench task: throughput and latency (ns), or the state of a task that did not complete. */
export function taskRows(bench: Bench): TaskRow[] {
  return bench.tasks.map((t) => {
    const r = t.result;
    if (r.state !== 'completed') return { name: t.name, state: r.state };
    return {
      name: t.name,
      opsPerSec: Math.round(r.throughput.mean),
      meanNs: Math.round(r.latency.mean * 1e6),
      p50Ns: Math.round(r.latency.p50 * 1e6),
      p99Ns: Math.round(r.latency.p99 * 1e6),
      samples: r.latency.samplesCount,
    };
  });
}

/** The markdown table of taskRows: ops/s and mean / p50 / p99 in µs (a task that did not complete shows its state). */
export function taskTable(results: TaskRow[]): string[] {
  const us = (ns: number) => round(ns / 1000, 2);
  return [
    '| task | ops/s | mean µs | p50 µs | p99 µs | samples |',
    '|---|---:|---:|---:|---:|---:|',
    ...results.map((r) =>
      'opsPerSec' in r
        ? `| ${r.name} | ${r.opsPerSec} | ${us(r.meanNs)} | ${us(r.p50Ns)} | ${us(r.p99Ns)} | ${r.samples} |`
        : `| ${r.name} | ${r.state} | | | | |`,
    ),
  ];
}
