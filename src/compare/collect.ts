/**
 * Source arguments of kubelet-ts-compare, and getting their scrapes: URLs
 * are scraped at the start and at the end of the window (all sources
 * together), files are read.
 *
 * Argument syntax: `[NAME=]URL`, `[NAME=]FILE` or `[NAME=]BEFORE,AFTER` (two
 * saved scrapes of one kubelet). NAME is letters, digits, `_`, `.` and `-`.
 */
import { basename, extname } from 'node:path';
import type { Clock } from '../common/clock.js';
import { SourceError } from './errors.js';
import type { Scraper } from './scrape.js';
import { parseSnapshot, type Scrape, type SourceScrapes } from './snapshot.js';
import { errorMessage } from '../common/error-message.js';

export type SourceSpec =
  | { kind: 'url'; name?: string; url: string }
  | { kind: 'file'; name?: string; path: string }
  | { kind: 'pair'; name?: string; before: string; after: string };

export function parseSourceArg(arg: string): SourceSpec {
  const m = /^([\w.-]+)=(.+)$/.exec(arg);
  const name = m?.[1];
  const rest = m ? m[2] : arg;
  if (rest.trim() === '') throw new SourceError(`empty source "${arg}"`);
  if (/^https?:\/\//i.test(rest)) return { kind: 'url', name, url: rest };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) throw new SourceError(`${arg}: only http:// and https:// URLs can be scraped`);
  const parts = rest.split(',');
  if (parts.length === 2 && parts.every(Boolean)) return { kind: 'pair', name, before: parts[0], after: parts[1] };
  if (parts.length > 2) throw new SourceError(`${arg}: want FILE or BEFORE,AFTER (two files), got ${parts.length} comma-separated parts`);
  return { kind: 'file', name, path: rest };
}

export interface CollectDeps {
  clock: Clock;
  scrape: Scraper;
  /** The file's text and modification time (ms). */
  readFile: (path: string) => { text: string; mtimeMs: number };
  /** Called about once a second while the window runs. */
  progress?: (elapsedMs: number, windowMs: number) => void;
  /** Called with the start scrapes before the window runs, to fail early (e.g. not a kubelet). */
  checkStart?: (sources: SourceScrapes[]) => void;
}

const stem = (path: string) => basename(path, extname(path));

function urlName(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function fromFiles(spec: Exclude<SourceSpec, { kind: 'url' }>, deps: CollectDeps): SourceScrapes[] {
  const read = (path: string) => {
    try {
      return deps.readFile(path);
    } catch (err) {
      throw new SourceError(`${path}: cannot read the snapshot: ${errorMessage(err)}`);
    }
  };
  if (spec.kind === 'file') {
    const f = read(spec.path);
    const sources = parseSnapshot(f.text, spec.path, f.mtimeMs, spec.name ?? stem(spec.path));
    if (spec.name && sources.length > 1)
      throw new SourceError(`${spec.path} holds ${sources.length} sources; a NAME= prefix needs exactly one`);
    return spec.name ? sources.map((s) => ({ ...s, name: spec.name! })) : sources;
  }
  const [before, after] = [spec.before, spec.after].map((p) => {
    const f = read(p);
    const s = parseSnapshot(f.text, p, f.mtimeMs, stem(p));
    if (s.length !== 1 || s[0].start) throw new SourceError(`${p}: a BEFORE,AFTER pair needs two single scrapes; this file holds more`);
    return s[0].end;
  });
  if (after.timeMs < before.timeMs) throw new SourceError(`${spec.after} is older than ${spec.before}: give BEFORE,AFTER in that order`);
  return [{ name: spec.name ?? stem(spec.after), origin: `${spec.before},${spec.after}`, start: before, end: after }];
}

/** Distinct names: a repeated name gets #2, #3… */
function uniqueNames(sources: SourceScrapes[]): SourceScrapes[] {
  const seen = new Map<string, number>();
  return sources.map((s) => {
    const n = (seen.get(s.name) ?? 0) + 1;
    seen.set(s.name, n);
    return n === 1 ? s : { ...s, name: `${s.name}#${n}` };
  });
}

/**
 * The scrapes of every source, in argument order. URL sources are scraped
 * twice, `windowMs` apart (once when windowMs is 0: cumulative numbers).
 */
export async function collectSources(specs: readonly SourceSpec[], windowMs: number, deps: CollectDeps): Promise<SourceScrapes[]> {
  const slots: (SourceScrapes[] | { name: string; url: string })[] = specs.map((s) =>
    s.kind === 'url' ? { name: s.name ?? urlName(s.url), url: s.url } : fromFiles(s, deps),
  );
  const urls = slots.filter((s): s is { name: string; url: string } => !Array.isArray(s));
  const scrapeAll = () =>
    Promise.all(
      urls.map(async (u): Promise<Scrape> => {
        const text = await deps.scrape(u.url);
        return { text, timeMs: deps.clock.now() };
      }),
    );
  let starts: Scrape[] | undefined;
  if (urls.length && windowMs > 0) {
    starts = await scrapeAll();
    deps.checkStart?.(urls.map((u, i) => ({ name: u.name, origin: u.url, end: starts![i] })));
    const t0 = deps.clock.now();
    for (;;) {
      const elapsed = deps.clock.now() - t0;
      deps.progress?.(Math.min(elapsed, windowMs), windowMs);
      if (elapsed >= windowMs) break;
      await deps.clock.sleep(Math.min(1000, windowMs - elapsed));
    }
  }
  const ends = urls.length ? await scrapeAll() : [];
  const out: SourceScrapes[] = [];
  let u = 0;
  for (const s of slots) {
    if (Array.isArray(s)) out.push(...s);
    else {
      const i = u++;
      out.push(starts ? { name: s.name, origin: s.url, start: starts[i], end: ends[i] } : { name: s.name, origin: s.url, end: ends[i] });
    }
  }
  return uniqueNames(out);
}
