import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { cdfPoints, renderCdfSvg, renderChartSvg } from '../../src/compare/svg-chart.js';

/** The element members these tests read (the DOM lib, which declares Element, is not loaded). */
interface SvgElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
}

describe('renderChartSvg', () => {
  const svg = renderChartSvg({
    title: 'relist p99 <by> mode & pods',
    subtitle: 'one run',
    xLabel: 'pods',
    yLabel: 'relist p99 (ms)',
    xType: 'log',
    series: [
      {
        name: 'parallel',
        points: [
          { x: 100, y: 5 },
          { x: 1000, y: 20 },
        ],
      },
      {
        name: 'serial',
        points: [
          { x: 100, y: 6 },
          { x: 1000, y: 30 },
        ],
      },
      { name: 'no data', points: [] },
    ],
  });
  // linkedom types its result with the DOM lib's Window, which this Node project does not load.
  const { document } = parseHTML(`<html><body>${svg}</body></html>`) as unknown as {
    document: { querySelectorAll(selector: string): Iterable<SvgElement> };
  };
  const texts = [...document.querySelectorAll('text')].map((t) => t.textContent);

  it('is a standalone SVG document with an escaped title', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('relist p99 &lt;by&gt; mode &amp; pods');
  });
  it('labels both axes and names every series in the legend, also one without points', () => {
    expect(texts).toContain('pods');
    expect(texts).toContain('relist p99 (ms)');
    for (const name of ['parallel', 'serial', 'no data']) expect(texts).toContain(name);
  });
  it('draws one line per series with points, in its legend colour', () => {
    const legendColours = [...document.querySelectorAll('rect[width="14"]')].map((r) => r.getAttribute('fill'));
    const lineColours = new Set([...document.querySelectorAll('g[aria-label="line"] path')].map((p) => p.getAttribute('stroke')));
    expect(legendColours).toHaveLength(3);
    expect(lineColours).toEqual(new Set(legendColours.slice(0, 2)));
  });
});

describe('CDF', () => {
  it('cdfPoints steps from 0 to 1 over the sorted values', () => {
    expect(cdfPoints([3, 1, 2, Number.NaN])).toEqual([
      { x: 1, y: 0 },
      { x: 1, y: 1 / 3 },
      { x: 2, y: 2 / 3 },
      { x: 3, y: 1 },
    ]);
  });
  it('renderCdfSvg names each series with its count', () => {
    const svg = renderCdfSvg({ title: 't', xLabel: 'ms', series: [{ name: 'agent', values: [1, 2] }] });
    expect(svg).toContain('agent (n=2)');
    expect(svg).toContain('share of pods ≤ x');
  });
});
