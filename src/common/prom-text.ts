/**
 * Prometheus text exposition format (version 0.0.4) parser, and histogram
 * extraction from the parsed samples. One parser serves `kubelet-ts-compare`
 * and the benchmarks (bench/lib/prom.ts).
 *
 * Why not an npm parser: the one listed (parse-prometheus-text-format 1.1.1)
 * folds every label set of a histogram into one object, so
 * `kubelet_runtime_operations_duration_seconds{operation_type=…}` loses all
 * operations but the last, together with their _count and _sum.
 *
 * Contract:
 * - `parsePromText` throws PromParseError (with the line number and the line)
 *   on the first line that is neither a comment, a HELP/TYPE line, a sample
 *   nor blank; as Prometheus, a scrape is all or nothing.
 * - Values follow Go's formatting: `+Inf`, `-Inf`, `NaN` and floats.
 * - Label values are unescaped (`\\`, `\"`, `\n`).
 */
import { KubeletTsError } from './errors.js';

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The optional timestamp (ms since the epoch) the exposition gave. */
  timestampMs?: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
}

export interface ParsedText {
  samples: Sample[];
  /** Families declared by HELP/TYPE lines, by name. */
  families: Map<string, Family>;
}

/** The text is not Prometheus text exposition. */
export class PromParseError extends KubeletTsError {
  override readonly code = 'KTS_ERR_PROM_PARSE';
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** A Go-formatted float: +Inf, -Inf, NaN, or a decimal/exponent number. */
export function parsePromValue(text: string): number {
  switch (text) {
    case '+Inf':
    case 'Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    case 'NaN':
      return Number.NaN;
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number.NaN;
  return Number(text);
}

function unescape(s: string, allowQuote: boolean): string {
  return s.replace(/\\(.)/g, (m, c: string) => (c === 'n' ? '\n' : c === '\\' ? '\\' : c === '"' && allowQuote ? '"' : m));
}

/** Parses `{a="x",b="y"}` starting at text[i] === '{'; returns the labels and the index after '}'. */
function parseLabels(text: string, i: number, fail: (why: string) => never): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  i++; // '{'
  for (;;) {
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (text[i] === '}') return [labels, i + 1];
    const name = LABEL_NAME.exec(text.slice(i))?.[0];
    if (!name) fail('a label name');
    i += name.length;
    while (text[i] === ' ') i++;
    if (text[i] !== '=' || text[i + 1] !== '"') fail(`="…" after label ${name}`);
    i += 2;
    let raw = '';
    for (;;) {
      if (i >= text.length) fail(`the closing quote of label ${name}`);
      const c = text[i];
      if (c === '\\') {
        raw += text.slice(i, i + 2);
        i += 2;
        continue;
      }
      if (c === '"') break;
      raw += c;
      i++;
    }
    labels[name] = unescape(raw, true);
    i++; // closing quote
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') fail(`',' or '}' after label ${name}`);
  }
}

/** Parses a whole exposition. Throws PromParseError on the first bad line. */
export function parsePromText(text: string): ParsedText {
  const samples: Sample[] = [];
  const families = new Map<string, Family>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: 'untyped', help: '' }));
    return f;
  };
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].replace(/\r$/, '');
    const fail: (why: string) => never = (why) => {
      const shown = line.length > 120 ? `${line.slice(0, 120)}…` : line;
      throw new PromParseError(`not Prometheus text exposition: line ${n + 1}: expected ${why} in ${JSON.stringify(shown)}`);
    };
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(trimmed);
      if (!m) continue; // a plain comment
      if (!NAME.test(m[2]) || NAME.exec(m[2])![0] !== m[2]) fail('a metric name');
      if (m[1] === 'HELP') family(m[2]).help = unescape(m[3] ?? '', false);
      else {
        const t = (m[3] ?? '').trim() as MetricType;
        if (!TYPES.has(t)) fail('a metric type (counter, gauge, histogram, summary, untyped)');
        family(m[2]).type = t;
      }
      continue;
    }
    const name = NAME.exec(trimmed)?.[0];
    if (!name) fail('a metric name');
    let i = name.length;
    let labels: Record<string, string> = {};
    if (trimmed[i] === '{') [labels, i] = parseLabels(trimmed, i, fail);
    const rest = trimmed.slice(i).trim().split(/\s+/);
    if (rest.length < 1 || rest.length > 2 || rest[0] === '') fail('a value (and optional timestamp)');
    const value = parsePromValue(rest[0]);
    if (Number.isNaN(value) && rest[0] !== 'NaN') fail('a number as the value');
    const sample: Sample = { name, labels, value };
    if (rest.length === 2) {
      const ts = Number(rest[1]);
      if (!Number.isInteger(ts)) fail('an integer timestamp');
      sample.timestampMs = ts;
    }
    samples.push(sample);
  }
  return { samples, families };
}

export interface Bucket {
  /** Upper bound (inclusive); Infinity for the +Inf bucket. */
  le: number;
  /** Cumulative count of observations <= le. */
  count: number;
}

export interface HistogramData {
  /** Sorted by le; the last is +Inf when the exposition is well formed. */
  buckets: Bucket[];
  count: number;
  sum: number;
}

export interface LabelledHistogram {
  /** The series' labels without `le`. */
  labels: Record<string, string>;
  histogram: HistogramData;
}

const seriesKey = (labels: Record<string, string>) =>
  JSON.stringify(
    Object.keys(labels)
      .filter((k) => k !== 'le')
      .sort()
      .map((k) => [k, labels[k]]),
  );

/** Every series of histogram `name` (its _bucket, _sum and _count samples), one per label set without `le`. */
export function histogramSeries(samples: readonly Sample[], name: string): LabelledHistogram[] {
  const series = new Map<string, LabelledHistogram>();
  const get = (labels: Record<string, string>) => {
    const key = seriesKey(labels);
    let s = series.get(key);
    if (!s) {
      const own = { ...labels };
      delete own.le;
      series.set(key, (s = { labels: own, histogram: { buckets: [], count: 0, sum: 0 } }));
    }
    return s.histogram;
  };
  for (const s of samples) {
    if (s.name === `${name}_bucket` && s.labels.le !== undefined)
      get(s.labels).buckets.push({ le: parsePromValue(s.labels.le), count: s.value });
    else if (s.name === `${name}_count`) get(s.labels).count = s.value;
    else if (s.name === `${name}_sum`) get(s.labels).sum = s.value;
  }
  for (const s of series.values()) s.histogram.buckets.sort((a, b) => a.le - b.le);
  return [...series.values()];
}
