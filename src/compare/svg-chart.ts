/**
 * Standalone SVG charts for benchmark reports and kubelet-ts-compare --svg,
 * drawn in Node without a browser: Observable Plot lays out scales, axes,
 * grid and lines against a linkedom document; this module adds the title and
 * a legend naming every series (Plot's own legend is HTML, which a .svg file
 * cannot hold) and makes the result a valid standalone SVG document.
 *
 * Contract: every series gets a colour and a legend entry even when it has no
 * points; axis labels are required. Callers pass values already in the unit
 * their label names.
 */
import * as Plot from '@observablehq/plot';
import { parseHTML } from 'linkedom';

export interface Point {
  x: number;
  y: number;
}

export interface Series {
  name: string;
  points: Point[];
}

export interface ChartSpec {
  title: string;
  /** One line under the title (setup, units, source of the numbers). */
  subtitle?: string;
  xLabel: string;
  yLabel: string;
  xType?: 'linear' | 'log';
  yType?: 'linear' | 'log';
  series: Series[];
  /** 'step' draws each series as a step function (for CDFs); default straight segments with a dot per point. */
  curve?: 'linear' | 'step';
  yDomain?: [number, number];
  width?: number;
  height?: number;
}

/** Plot's observable10 scheme, fixed so that legend and lines agree. */
const COLORS = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#3ca951', '#ff8ab7', '#a463f2', '#97bbf5', '#9c6b4e', '#9498a0'];

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Splits text into lines of at most `max` characters at spaces (a longer word gets a line of its own). */
function wrap(text: string, max: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ').filter(Boolean)) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= max) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** Renders the chart as a standalone SVG document (a string starting with `<svg xmlns=…`). */
export function renderChartSvg(spec: ChartSpec): string {
  const width = spec.width ?? 720;
  const plotHeight = spec.height ?? 400;
  // linkedom types its result with the DOM lib's Window, which this Node project does not load.
  const { document } = parseHTML('<!DOCTYPE html><html><body></body></html>') as unknown as { document: object };
  const names = spec.series.map((s) => s.name);
  const data = spec.series.flatMap((s) => s.points.map((p) => ({ series: s.name, x: p.x, y: p.y })));
  const color = (name: string) => COLORS[names.indexOf(name) % COLORS.length];
  const line =
    spec.curve === 'step'
      ? Plot.line(data, {
          x: 'x',
          y: 'y',
          z: 'series',
          stroke: (d: { series: string }) => color(d.series),
          curve: 'step-after',
          strokeWidth: 2,
        })
      : Plot.line(data, {
          x: 'x',
          y: 'y',
          z: 'series',
          stroke: (d: { series: string }) => color(d.series),
          marker: 'circle-stroke',
          strokeWidth: 2,
        });
  const plot = Plot.plot({
    document: document as never,
    width,
    height: plotHeight,
    marginLeft: 70,
    marginBottom: 45,
    marginRight: 30,
    style: { fontSize: '12px', background: 'white' },
    x: {
      type: spec.xType ?? 'linear',
      label: spec.xLabel,
      labelAnchor: 'center',
      labelArrow: 'none',
      grid: true,
      nice: spec.xType !== 'log',
    },
    y: {
      type: spec.yType ?? 'linear',
      label: spec.yLabel,
      labelAnchor: 'center',
      labelArrow: 'none',
      grid: true,
      nice: !spec.yDomain && spec.yType !== 'log',
      ...(spec.yDomain ? { domain: spec.yDomain } : {}),
    },
    marks: [Plot.frame({ strokeOpacity: 0.3 }), line],
  }) as unknown as { outerHTML: string };
  const subtitle = wrap(spec.subtitle ?? '', Math.floor(width / 6.5));
  // Legend: swatches in rows above the plot.
  const legend: string[] = [];
  let lx = 70;
  let ly = 42 + 16 * subtitle.length;
  for (const name of names) {
    const w = 28 + name.length * 7;
    if (lx + w > width - 10 && lx > 70) {
      lx = 70;
      ly += 18;
    }
    legend.push(
      `<rect x="${lx}" y="${ly - 9}" width="14" height="10" fill="${color(name)}"/>`,
      `<text x="${lx + 19}" y="${ly}" font-size="12">${xml(name)}</text>`,
    );
    lx += w + 12;
  }
  const top = ly + 12;
  const inner = plot.outerHTML.replace(/^<svg /, `<svg x="0" y="${top}" `);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${top + plotHeight}" viewBox="0 0 ${width} ${top + plotHeight}" font-family="system-ui, sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" font-size="16" font-weight="bold" text-anchor="middle">${xml(spec.title)}</text>`,
    ...subtitle.map(
      (line, i) => `<text x="${width / 2}" y="${40 + 16 * i}" font-size="12" text-anchor="middle" fill="#555">${xml(line)}</text>`,
    ),
    ...legend,
    inner,
    '</svg>',
    '',
  ].join('\n');
}

/** The empirical CDF of `values` as step points: (v_i, i/n) for sorted values, starting at (min, 0). */
export function cdfPoints(values: readonly number[]): Point[] {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  return [{ x: sorted[0], y: 0 }, ...sorted.map((x, i) => ({ x, y: (i + 1) / sorted.length }))];
}

/**
 * A CDF chart: one step line per series of raw values (e.g. per-pod start-up
 * times of each agent), y = share of values ≤ x.
 */
export function renderCdfSvg(spec: {
  title: string;
  subtitle?: string;
  xLabel: string;
  series: { name: string; values: readonly number[] }[];
  xType?: 'linear' | 'log';
}): string {
  return renderChartSvg({
    title: spec.title,
    subtitle: spec.subtitle,
    xLabel: spec.xLabel,
    yLabel: 'share of pods ≤ x',
    xType: spec.xType,
    yDomain: [0, 1],
    curve: 'step',
    series: spec.series.map((s) => ({ name: `${s.name} (n=${s.values.length})`, points: cdfPoints(s.values) })),
  });
}
