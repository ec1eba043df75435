/**
 * Saved scrapes ("snapshots") for kubelet-ts-compare.
 *
 * A snapshot file is Prometheus text exposition in sections, each preceded by
 * a marker comment (a plain comment to any Prometheus parser):
 *
 *   # kubelet-ts-compare snapshot name="go" origin="https://…/metrics" phase="start" time="2026-11-23T01:02:03.000Z"
 *   …the text as scraped…
 *
 * A source has an `end` section and, when it was scraped over a window, a
 * `start` section; a file may hold several sources. A file without markers
 * (e.g. `curl …/metrics > a.txt`) is one source, one scrape: its counts are
 * cumulative since that kubelet started.
 */
import { SourceError } from './errors.js';

export interface Scrape {
  text: string;
  /** When the scrape completed, ms since the epoch. */
  timeMs: number;
}

export interface SourceScrapes {
  name: string;
  /** The URL or file the scrapes came from. */
  origin: string;
  /** Absent: one scrape only; counts are cumulative since the process started. */
  start?: Scrape;
  end: Scrape;
}

const MARKER = '# kubelet-ts-compare snapshot ';

function header(name: string, origin: string, phase: 'start' | 'end', timeMs: number): string {
  const kv = { name, origin, phase, time: new Date(timeMs).toISOString() };
  return `${MARKER}${Object.entries(kv)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(' ')}`;
}

export function formatSnapshot(sources: readonly SourceScrapes[]): string {
  const parts: string[] = [];
  for (const s of sources) {
    for (const phase of ['start', 'end'] as const) {
      const scrape = s[phase];
      if (!scrape) continue;
      parts.push(`${header(s.name, s.origin, phase, scrape.timeMs)}\n`, scrape.text.endsWith('\n') ? scrape.text : `${scrape.text}\n`);
    }
  }
  return parts.join('');
}

function parseHeader(line: string, where: string): { name: string; origin: string; phase: string; timeMs: number } {
  const fields: Record<string, string> = {};
  for (const m of line.slice(MARKER.length).matchAll(/([a-z]+)=("(?:[^"\\]|\\.)*")/g)) fields[m[1]] = JSON.parse(m[2]) as string;
  const timeMs = Date.parse(fields.time ?? '');
  if (!fields.name || !fields.origin || !['start', 'end'].includes(fields.phase ?? '') || Number.isNaN(timeMs)) {
    throw new SourceError(`${where}: malformed snapshot marker (want name, origin, phase start|end, time): ${line}`);
  }
  return { name: fields.name, origin: fields.origin, phase: fields.phase, timeMs };
}

/**
 * The sources in a snapshot file. `fileTimeMs` (the file's mtime) dates a
 * plain exposition without markers; `defaultName` names it.
 */
export function parseSnapshot(text: string, file: string, fileTimeMs: number, defaultName: string): SourceScrapes[] {
  const lines = text.split('\n');
  if (!lines.some((l) => l.startsWith(MARKER))) return [{ name: defaultName, origin: file, end: { text, timeMs: fileTimeMs } }];
  const out = new Map<string, { name: string; origin: string; start?: Scrape; end?: Scrape }>();
  const sectionLines = new Map<Scrape, string[]>();
  let current: Scrape | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith(MARKER)) {
      const h = parseHeader(line, `${file}:${i + 1}`);
      let s = out.get(h.name);
      if (!s) out.set(h.name, (s = { name: h.name, origin: h.origin }));
      const phase = h.phase as 'start' | 'end';
      if (s[phase]) throw new SourceError(`${file}:${i + 1}: a second "${phase}" section for source "${h.name}"`);
      current = s[phase] = { text: '', timeMs: h.timeMs };
      sectionLines.set(current, []);
    } else if (current) sectionLines.get(current)!.push(line);
    else if (line.trim() !== '') throw new SourceError(`${file}:${i + 1}: text before the first snapshot marker`);
  }
  for (const [scrape, body] of sectionLines) {
    while (body.length && body.at(-1)!.trim() === '') body.pop();
    scrape.text = body.length ? `${body.join('\n')}\n` : '';
  }
  return [...out.values()].map((s) => {
    if (!s.end) throw new SourceError(`${file}: source "${s.name}" has a start section but no end section`);
    return s.start ? { name: s.name, origin: s.origin, start: s.start, end: s.end } : { name: s.name, origin: s.origin, end: s.end };
  });
}
