/**
 * The comparison as rows (metric, statistic, one value per source, ratios to
 * the first source), and those rows as an aligned text table, a markdown
 * table or JSON.
 */
import type { Comparison, HistStats, SourceSummary } from './summary.js';
import { METRICS } from './summary.js';

export type Unit = 'count' | 'ms' | 's';

export interface Row {
  metric: string;
  stat: string;
  unit: Unit;
  values: (number | null)[];
  /** value / first source's value; null where either is missing, zero or not a number. */
  ratios: (number | null)[];
}

function histRows(
  metric: string,
  get: (s: SourceSummary) => HistStats | null | undefined,
  sources: SourceSummary[],
  p90 = true,
): Omit<Row, 'ratios'>[] {
  const v = (f: (h: HistStats) => number) =>
    sources.map((s) => {
      const h = get(s);
      return h ? f(h) : null;
    });
  return [
    { metric, stat: 'count', unit: 'count', values: v((h) => h.count) },
    { metric, stat: 'mean', unit: 'ms', values: v((h) => h.meanS * 1000) },
    { metric, stat: 'p50', unit: 'ms', values: v((h) => h.p50S * 1000) },
    ...(p90 ? [{ metric, stat: 'p90', unit: 'ms' as const, values: v((h) => h.p90S * 1000) }] : []),
    { metric, stat: 'p99', unit: 'ms', values: v((h) => h.p99S * 1000) },
  ];
}

export function comparisonRows(c: Comparison): Row[] {
  const S = c.sources;
  const rows: Omit<Row, 'ratios'>[] = [
    ...histRows(METRICS.relistDuration, (s) => s.relistDuration, S),
    ...histRows(METRICS.relistInterval, (s) => s.relistInterval, S, false),
    { metric: METRICS.discardEvents, stat: 'increase', unit: 'count', values: S.map((s) => s.discardEvents) },
    { metric: METRICS.lastSeen, stat: 'age at last scrape', unit: 's', values: S.map((s) => s.lastSeenAgeS) },
  ];
  if (S.some((s) => s.evented)) {
    rows.push(
      { metric: METRICS.eventedErrors, stat: 'increase', unit: 'count', values: S.map((s) => s.evented?.connectionErrors ?? null) },
      { metric: METRICS.eventedSuccess, stat: 'increase', unit: 'count', values: S.map((s) => s.evented?.connectionSuccess ?? null) },
      ...histRows(METRICS.eventedLatency, (s) => s.evented?.connectionLatency, S, false),
    );
  }
  // Operations called in the window on at least one source.
  const ops = [...new Set(S.flatMap((s) => Object.keys(s.runtimeOps).filter((op) => s.runtimeOps[op].count > 0)))].sort();
  for (const op of ops) {
    const metric = `${METRICS.runtimeOps}{operation_type="${op}"}`;
    rows.push(...histRows(metric, (s) => s.runtimeOps[op], S, false));
    if (S.some((s) => s.runtimeOpErrors[op]))
      rows.push({ metric, stat: 'errors', unit: 'count', values: S.map((s) => s.runtimeOpErrors[op] ?? 0) });
  }
  return rows.map((r) => ({
    ...r,
    ratios: r.values.map((v, i) => {
      const base = r.values[0];
      if (i === 0 || v === null || base === null || !Number.isFinite(v) || !Number.isFinite(base) || base === 0) return null;
      if (r.stat === 'age at last scrape') return null;
      return v / base;
    }),
  }));
}

export function formatValue(v: number | null, unit: Unit): string {
  if (v === null) return '—';
  if (Number.isNaN(v)) return 'n/a';
  if (unit === 'count') return Number.isInteger(v) ? String(v) : v.toFixed(1);
  const abs = Math.abs(v);
  return abs >= 100 ? v.toFixed(0) : abs >= 10 ? v.toFixed(1) : v.toFixed(2);
}

const ratio = (r: number | null) => (r === null ? '—' : `${r.toFixed(2)}×`);

function sourceLine(s: SourceSummary): string {
  const span = s.windowS === null ? 'cumulative since the kubelet started' : `over a ${s.windowS.toFixed(1)} s window`;
  return `${s.name}: ${s.origin}, ${span}, last scrape ${s.endTime}`;
}

function headers(c: Comparison): string[] {
  const [first, ...rest] = c.sources;
  return ['metric', 'stat', first.name, ...rest.flatMap((s) => [s.name, `${s.name}/${first.name}`])];
}

function cells(r: Row): string[] {
  const unit = r.unit === 'count' ? '' : ` (${r.unit})`;
  return [
    `${r.stat}${unit}`,
    ...r.values.flatMap((v, i) => (i === 0 ? [formatValue(v, r.unit)] : [formatValue(v, r.unit), ratio(r.ratios[i])])),
  ];
}

export function renderText(c: Comparison): string {
  const rows = comparisonRows(c);
  const head = headers(c).slice(1);
  const table: string[][] = [];
  let last = '';
  const metricRows: number[] = [];
  for (const r of rows) {
    if (r.metric !== last) {
      metricRows.push(table.length);
      table.push([r.metric]);
      last = r.metric;
    }
    table.push(cells(r).map((x, i) => (i === 0 ? `  ${x}` : x)));
  }
  const widths = head.map((h, i) =>
    Math.max(h.length, ...table.filter((_, j) => !metricRows.includes(j)).map((row) => row[i]?.length ?? 0)),
  );
  const line = (row: string[]) => row.map((x, i) => (i === 0 ? x.padEnd(widths[0]) : x.padStart(widths[i]))).join('  ');
  const out = [...c.sources.map(sourceLine), '', line(head), ...table.map((row, j) => (metricRows.includes(j) ? row[0] : line(row)))];
  if (c.notes.length) out.push('', ...c.notes.map((n) => `note: ${n}`));
  return `${out.join('\n')}\n`;
}

export function renderMarkdown(c: Comparison): string {
  const rows = comparisonRows(c);
  const head = headers(c);
  const out = [
    ...c.sources.map((s) => `- ${sourceLine(s)}`),
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| \`${r.metric}\` | ${cells(r).join(' | ')} |`),
  ];
  if (c.notes.length) out.push('', ...c.notes.map((n) => `Note: ${n}`));
  return `${out.join('\n')}\n`;
}

export function renderJson(c: Comparison): string {
  const finite = (_k: string, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? (Number.isNaN(v) ? null : v > 0 ? '+Inf' : '-Inf') : v;
  return `${JSON.stringify({ sources: c.sources, rows: comparisonRows(c), notes: c.notes }, finite, 2)}\n`;
}
