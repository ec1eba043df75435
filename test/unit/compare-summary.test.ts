import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BucketMismatchError, CounterResetError } from '../../src/common/histogram-math.js';
import { MetricMissingError, NotAKubeletError } from '../../src/compare/errors.js';
import { comparisonRows, renderJson, renderMarkdown, renderText } from '../../src/compare/render.js';
import type { SourceScrapes } from '../../src/compare/snapshot.js';
import { compareSources } from '../../src/compare/summary.js';

const fixture = (f: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'metrics', f), 'utf8');
const T0 = 1_795_396_100_000;
const go: SourceScrapes = {
  name: 'go',
  origin: 'https://127.0.0.1:10250/metrics',
  start: { text: fixture('go-kubelet-1.20.2-a.txt'), timeMs: T0 },
  end: { text: fixture('go-kubelet-1.20.2-b.txt'), timeMs: T0 + 5000 },
};
const ts: SourceScrapes = {
  name: 'ts',
  origin: 'http://127.0.0.1:10250/metrics',
  start: { text: fixture('kubelet-ts-start.txt'), timeMs: T0 },
  end: { text: fixture('kubelet-ts-end.txt'), timeMs: T0 + 5000 },
};
/** A source with its end text changed by fn. */
const mutate = (s: SourceScrapes, fn: (text: string) => string, name = `${s.name}'`): SourceScrapes => ({
  ...s,
  name,
  end: { ...s.end, text: fn(s.end.text) },
});

describe('compareSources', () => {
  it('takes the window difference of the Go kubelet and kubelet-ts histograms', () => {
    const c = compareSources([go, ts]);
    const [g, t] = c.sources;
    expect(g.relistCount).toEqual({ start: 13, end: 18 });
    expect(g.relistDuration?.count).toBe(5);
    expect(t.relistCount).toEqual({ start: 4, end: 9 });
    expect(t.relistDuration?.count).toBe(5);
    expect(g.windowS).toBe(5);
    expect(g.discardEvents).toBe(0);
    expect(g.runtimeOps.list_podsandbox.count).toBe(36 - 27);
    expect(g.evented).toBeNull();
    expect(c.notes).toEqual([]);
  });

  it('without a start scrape the numbers are cumulative', () => {
    const c = compareSources([{ ...go, start: undefined }]);
    expect(c.sources[0].relistDuration?.count).toBe(18);
    expect(c.sources[0].windowS).toBeNull();
  });

  it('shows evented PLEG metrics when a source has them', () => {
    const evented = mutate(
      go,
      (t) => `${t}kubelet_evented_pleg_connection_success_count 2\nkubelet_evented_pleg_connection_error_count 1\n`,
    );
    const c = compareSources([evented, ts]);
    expect(c.sources[0].evented).toEqual({ connectionErrors: 1, connectionSuccess: 2, connectionLatency: null });
    expect(comparisonRows(c).map((r) => r.metric)).toContain('kubelet_evented_pleg_connection_success_count');
  });

  it.each([
    [
      'not a kubelet',
      mutate(go, () => 'go_goroutines 12\nprocess_cpu_seconds_total 3\n'),
      NotAKubeletError,
      /not a kubelet's \/metrics: it has no kubelet_\* metric \(2 others, e.g. go_goroutines/,
    ],
    [
      'a PLEG metric missing on one side',
      mutate(go, (t) => t.replace(/^kubelet_pleg_relist_interval_seconds.*\n/gm, '')),
      MetricMissingError,
      /kubelet_pleg_relist_interval_seconds is missing on go' \(https:\/\/127.0.0.1:10250\/metrics\) but present on ts/,
    ],
    [
      'buckets that differ between sources',
      mutate({ ...go, start: undefined }, (t) => t.replace(/kubelet_pleg_relist_duration_seconds_bucket\{le="0.005"\}.*\n/, '')),
      BucketMismatchError,
      /kubelet_pleg_relist_duration_seconds: the buckets differ between sources.*go' has \[0.01,/,
    ],
    [
      'a restart inside the window',
      mutate(go, (t) =>
        t
          .replace(/^kubelet_pleg_discard_events 0$/m, 'kubelet_pleg_discard_events 0\n')
          .replace('kubelet_pleg_relist_duration_seconds_count 18', 'kubelet_pleg_relist_duration_seconds_count 1'),
      ),
      CounterResetError,
      /count went down from 13 to 1/,
    ],
  ])('%s is a clear error', (_name, bad, type, message) => {
    const sources = _name === 'buckets that differ between sources' ? [{ ...ts, start: undefined }, bad] : [bad, ts];
    expect(() => compareSources(sources)).toThrow(type);
    expect(() => compareSources(sources)).toThrow(message);
  });

  it('--allow-missing shows the rest and says what is missing', () => {
    const bad = mutate(go, (t) => t.replace(/^kubelet_pleg_last_seen_seconds.*\n/gm, ''));
    const c = compareSources([bad, ts], { allowMissing: true });
    expect(c.sources[0].lastSeenAgeS).toBeNull();
    expect(c.notes[0]).toMatch(/kubelet_pleg_last_seen_seconds is missing on go'/);
  });
});

describe('render', () => {
  const c = compareSources([go, ts]);
  it('rows carry every source and the ratio to the first', () => {
    const rows = comparisonRows(c);
    const count = rows.find((r) => r.metric === 'kubelet_pleg_relist_duration_seconds' && r.stat === 'count')!;
    expect(count.values).toEqual([5, 5]);
    expect(count.ratios).toEqual([null, 1]);
    const mean = rows.find((r) => r.metric === 'kubelet_pleg_relist_duration_seconds' && r.stat === 'mean')!;
    expect(mean.ratios[1]).toBeCloseTo(mean.values[1]! / mean.values[0]!, 12);
    const stats = rows.filter((r) => r.metric === 'kubelet_pleg_relist_duration_seconds').map((r) => r.stat);
    expect(stats).toEqual(['count', 'mean', 'p50', 'p90', 'p99']);
    // The Go kubelet has no remove_container series at all (null, shown "—"); kubelet-ts called it once.
    const removes = rows.find((r) => r.metric.includes('"remove_container"') && r.stat === 'count')!;
    expect(removes.values).toEqual([null, 1]);
    expect(removes.ratios).toEqual([null, null]);
    // Operations nobody called in the window have no rows.
    expect(rows.some((r) => r.metric.includes('"exec_sync"'))).toBe(false);
  });

  it('text, markdown and JSON name both sources and the ratio column', () => {
    const text = renderText(c);
    expect(text).toMatch(/^go: https:\/\/127.0.0.1:10250\/metrics, over a 5.0 s window/m);
    expect(text).toMatch(/^stat\s+go\s+ts\s+ts\/go$/m);
    expect(text).toMatch(/^ {2}count\s+5\s+5\s+1.00×$/m);
    expect(renderMarkdown(c)).toMatch(/^\| `kubelet_pleg_relist_duration_seconds` \| count \| 5 \| 5 \| 1.00× \|$/m);
    const json = JSON.parse(renderJson(c)) as { sources: { name: string; relistDuration: { buckets: { le: string }[] } }[] };
    expect(json.sources.map((s) => s.name)).toEqual(['go', 'ts']);
    expect(json.sources[0].relistDuration.buckets.at(-1)?.le).toBe('+Inf');
  });
});
