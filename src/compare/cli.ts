/**
 * `kubelet-ts-compare`: PLEG relist latency and runtime operation metrics of
 * two or more kubelets side by side. `bin/kubelet-ts-compare.js` calls
 * `main(argv)` and exits with the returned code (0 ok, 1 the comparison
 * failed, 2 bad usage); nothing here exits the process.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { realClock, type Clock } from '../common/clock.js';
import { KubeletTsError } from '../common/errors.js';
import { errorMessage } from '../common/error-message.js';
import { parseDuration } from '../common/duration.js';
import { collectSources, parseSourceArg, type SourceSpec } from './collect.js';
import { renderJson, renderMarkdown, renderText } from './render.js';
import { makeScraper, type ScrapeOptions, type Scraper } from './scrape.js';
import { formatSnapshot } from './snapshot.js';
import { compareSources } from './summary.js';

interface Writer {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface CompareIo {
  stdout?: Writer;
  stderr?: Writer;
  clock?: Clock;
  /** Replaces the http(s) scraper (tests). */
  scraper?: (opts: ScrapeOptions) => Scraper;
}

interface Options {
  window: number;
  timeout: number;
  cert?: string;
  key?: string;
  cacert?: string;
  token?: string;
  tokenFile?: string;
  insecure?: boolean;
  json?: boolean;
  markdown?: boolean;
  save?: string;
  svg?: string;
  allowMissing?: boolean;
}

const durationMs = (v: string) => {
  try {
    const ms = parseDuration(v);
    if (ms < 0) throw new Error('negative');
    return ms;
  } catch {
    throw new InvalidArgumentError(`want a duration such as 60s, 1m30s or 0, got "${v}"`);
  }
};

function program(): Command {
  return new Command('kubelet-ts-compare')
    .description(
      'Compare PLEG relist latency (kubelet_pleg_*) and runtime operation latency (kubelet_runtime_operations_*) of ' +
        'kubelets side by side, with ratios to the first source.\n\n' +
        'A source is [NAME=]URL (a kubelet /metrics endpoint, http or https), [NAME=]FILE (a snapshot written by ' +
        '--save, or any saved /metrics text: cumulative numbers), or [NAME=]BEFORE,AFTER (two saved scrapes of one ' +
        'kubelet: the difference). URL sources are scraped at the start and the end of --window and the numbers are ' +
        'the difference of the two scrapes.',
    )
    .argument('<source...>', 'kubelet /metrics URLs or snapshot files')
    .addOption(
      new Option('--window <duration>', 'time between the two scrapes of URL sources; 0 = one scrape, cumulative numbers')
        .argParser(durationMs)
        .default(60_000, '60s'),
    )
    .addOption(new Option('--timeout <duration>', 'timeout of one scrape').argParser(durationMs).default(10_000, '10s'))
    .option('--cert <file>', 'PEM client certificate for https sources (with --key)')
    .option('--key <file>', 'PEM private key of --cert')
    .option('--cacert <file>', 'PEM CA bundle that signed the https sources certificates')
    .option('--insecure', 'do not check the https sources certificates')
    .option('--token <token>', 'bearer token sent to every URL source')
    .option('--token-file <file>', 'read the bearer token from this file')
    .option('--json', 'print JSON (sources, rows with ratios, notes) instead of the table')
    .option('--markdown', 'print a markdown table instead of the text table')
    .option('--save <file>', 'also write the scrapes to FILE, a snapshot to compare later (kubelet-ts-compare FILE …)')
    .option('--svg <file>', 'also write the relist duration histograms of all sources as an SVG chart')
    .option('--allow-missing', 'show "—" for a PLEG metric missing on some source instead of failing')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
}

/** Entry point. Returns the exit code. */
export async function main(argv: readonly string[], io: CompareIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const clock = io.clock ?? realClock;
  const cmd = program();
  let specs: SourceSpec[];
  let o: Options;
  try {
    cmd.parse(argv, { from: 'user' });
    o = cmd.opts<Options>();
    specs = (cmd.processedArgs[0] as string[]).map((a) => parseSourceArg(a));
    if (o.json && o.markdown) throw new InvalidArgumentError('--json and --markdown exclude each other');
    if (!!o.cert !== !!o.key) throw new InvalidArgumentError('--cert and --key go together');
    if (o.token && o.tokenFile) throw new InvalidArgumentError('--token and --token-file exclude each other');
    const urls = specs.filter((s) => s.kind === 'url');
    if ((o.cert || o.cacert || o.insecure) && !urls.some((s) => /^https:/i.test(s.url))) {
      throw new InvalidArgumentError('--cert, --key, --cacert and --insecure apply to https sources, and none was given');
    }
    if ((o.token || o.tokenFile) && urls.length === 0)
      throw new InvalidArgumentError('--token and --token-file apply to URL sources, and none was given');
  } catch (err) {
    if (err instanceof CommanderError && (err.code === 'commander.helpDisplayed' || err.code === 'commander.help')) {
      stdout.write(cmd.helpInformation());
      return 0;
    }
    const msg = err instanceof CommanderError ? err.message.replace(/^error: /, '') : errorMessage(err);
    stderr.write(`kubelet-ts-compare: ${msg}\n(see kubelet-ts-compare --help)\n`);
    return 2;
  }
  try {
    const read = (f: string | undefined) => (f ? readFileSync(f) : undefined);
    const scrapeOpts: ScrapeOptions = {
      cert: read(o.cert),
      key: read(o.key),
      ca: read(o.cacert),
      token: o.token ?? (o.tokenFile ? readFileSync(o.tokenFile, 'utf8').trim() : undefined),
      insecure: o.insecure,
      timeoutMs: o.timeout,
    };
    const urlCount = specs.filter((s) => s.kind === 'url').length;
    const tty = stderr.isTTY === true;
    let lastLine = -Infinity;
    const step = Math.max(5000, o.window / 6);
    const sources = await collectSources(specs, o.window, {
      clock,
      scrape: (io.scraper ?? makeScraper)(scrapeOpts),
      readFile: (p) => ({ text: readFileSync(p, 'utf8'), mtimeMs: statSync(p).mtimeMs }),
      checkStart: (starts) => compareSources(starts, { allowMissing: o.allowMissing }),
      progress: (elapsed, total) => {
        const text = `window: ${Math.round(elapsed / 1000)} s of ${Math.round(total / 1000)} s (${urlCount} URL source${urlCount === 1 ? '' : 's'})`;
        if (tty) stderr.write(`\r${text}${elapsed >= total ? '\n' : ''}`);
        else if (elapsed - lastLine >= step || elapsed >= total) {
          lastLine = elapsed;
          stderr.write(`${text}\n`);
        }
      },
    });
    if (o.save) writeFileSync(o.save, formatSnapshot(sources));
    const comparison = compareSources(sources, { allowMissing: o.allowMissing });
    if (o.svg) writeFileSync(o.svg, (await import('./chart.js')).comparisonChartSvg(comparison));
    stdout.write(o.json ? renderJson(comparison) : o.markdown ? renderMarkdown(comparison) : renderText(comparison));
    if (o.save) stderr.write(`saved the scrapes of ${sources.length} source(s) to ${o.save}\n`);
    if (o.svg) stderr.write(`wrote the chart to ${o.svg}\n`);
    return 0;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const msg =
      err instanceof KubeletTsError ? `${err.message} [${err.code}]` : e.code === 'ENOENT' ? `no such file: ${e.path}` : e.message;
    stderr.write(`kubelet-ts-compare: ${msg}\n`);
    return 1;
  }
}
