import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/compare/cli.js';
import { FakeClock } from '../fakes/fake-clock.js';

const fixture = (f: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'metrics', f), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'kts-compare-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs main with captured output; URL bodies come from `bodies` (a list per URL: one per scrape). */
async function run(argv: string[], bodies: Record<string, string[]> = {}) {
  let out = '';
  let err = '';
  const clock = new FakeClock();
  const code = await main(argv, {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    clock,
    scraper: () => async (url) => {
      const list = bodies[url];
      if (!list?.length) throw new Error(`unexpected scrape of ${url}`);
      return list.length > 1 ? list.shift()! : list[0];
    },
  });
  return { code, out, err };
}

describe('kubelet-ts-compare usage', () => {
  it.each([
    [[], /missing required argument 'source'/],
    [['--json', '--markdown', 'a.txt'], /--json and --markdown exclude each other/],
    [['--cert', 'c.pem', 'https://h/metrics'], /--cert and --key go together/],
    [['--insecure', 'http://h/metrics'], /apply to https sources, and none was given/],
    [['--token', 't', 'a.txt'], /apply to URL sources/],
    [['--window', '1x', 'a.txt'], /want a duration such as 60s/],
    [['ftp://h/metrics'], /only http:\/\/ and https:\/\/ URLs/],
  ])('%j → exit 2', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('--help prints the source syntax', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\[NAME=\]BEFORE,AFTER/);
  });
});

describe('kubelet-ts-compare', () => {
  const goUrl = 'https://go:10250/metrics';
  const tsUrl = 'http://ts:10250/metrics';
  const bodies = () => ({
    [goUrl]: [fixture('go-kubelet-1.20.2-a.txt'), fixture('go-kubelet-1.20.2-b.txt')],
    [tsUrl]: [fixture('kubelet-ts-start.txt'), fixture('kubelet-ts-end.txt')],
  });

  it('prints the side-by-side table and saves a snapshot that reproduces it', async () => {
    const save = join(dir, 'run.prom');
    const svg = join(dir, 'run.svg');
    const r = await run(['--window', '0', '--save', save, '--svg', svg, `go=${goUrl}`, `ts=${tsUrl}`], bodies());
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^stat\s+go\s+ts\s+ts\/go$/m);
    // window 0: one scrape each, cumulative (the first body of each URL)
    expect(r.out).toMatch(/kubelet_pleg_relist_duration_seconds\n {2}count\s+13\s+4\s+0.31×/);
    const again = await run([save]);
    expect(again.code).toBe(0);
    expect(again.out.split('\n').slice(2)).toEqual(r.out.split('\n').slice(2));
    const chart = readFileSync(svg, 'utf8');
    expect(chart).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(chart).toContain('>go</text>');
    expect(chart).toContain('>ts</text>');
  });

  it('--json gives rows with ratios', async () => {
    const r = await run(['--window', '0', '--json', `go=${goUrl}`, `ts=${tsUrl}`], bodies());
    const json = JSON.parse(r.out) as { rows: { metric: string; stat: string; values: number[]; ratios: number[] }[] };
    const count = json.rows.find((x) => x.metric === 'kubelet_pleg_relist_duration_seconds' && x.stat === 'count');
    expect(count?.values).toEqual([13, 4]);
    expect(count?.ratios[1]).toBeCloseTo(4 / 13, 10);
  });

  it('a URL that is not a kubelet fails with exit 1 and says so', async () => {
    const r = await run(['--window', '0', 'http://x/metrics'], { 'http://x/metrics': ['# HELP go_goroutines g\ngo_goroutines 3\n'] });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/x \(http:\/\/x\/metrics\) is not a kubelet's \/metrics.*\[KTS_ERR_COMPARE_NOT_A_KUBELET\]/);
  });

  it('an HTML page is not Prometheus text', async () => {
    const r = await run(['--window', '0', 'http://x/'], { 'http://x/': ['<html><body>hello</body></html>'] });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/not Prometheus text exposition: line 1/);
  });

  it('a missing snapshot file is named', async () => {
    const r = await run([join(dir, 'nope.prom')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/nope.prom: cannot read the snapshot/);
  });
});
