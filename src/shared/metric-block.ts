/**
 * Counters and histograms in a SharedArrayBuffer. Workers (and the main
 * thread) bump them with Atomics; the main thread's prom-client collectors
 * read `snapshot()` on scrape. No prom-client dependency here.
 *
 * Contract:
 * - The spec is fixed at `create` and stored (as JSON) in the buffer, so
 *   `attach(sab)` needs nothing else.
 * - Resolve ids once with `counterId` / `histogramId`; `inc` and `observe`
 *   do no string work and may run on any thread concurrently.
 * - Every cell is a BigInt64 updated with Atomics.add, so no update is lost.
 *   A snapshot is not a consistent cut: a concurrent observe may be counted
 *   in a bucket but not yet in count/sum (Prometheus tolerates this).
 * - Histogram sums are kept in integer microseconds (observe rounds), so
 *   sub-microsecond durations are lost; bucket counts are non-cumulative,
 *   the last one being +Inf.
 */
import { KubeletTsError } from '../common/errors.js';

export const METRIC_BLOCK_MAGIC = 0x4b4d4554; // 'KMET'
/** Bumped on any change to the layout below. */
export const METRIC_BLOCK_VERSION = 1;

// Header, Int32 word indexes. The spec JSON follows at SPEC_OFFSET; cells start at H_CELLS_OFFSET bytes.
export const H_MAGIC = 0;
export const H_VERSION = 1;
export const H_SPEC_BYTES = 2;
export const H_CELLS_OFFSET = 3;
export const SPEC_OFFSET = 16;

// Histogram cells, BigInt64 offsets from the histogram's first cell.
export const HIST_COUNT = 0;
export const HIST_SUM_MICROS = 1;
export const HIST_BUCKETS = 2; // then buckets.length + 1 bucket counts (+Inf last)

export type Labels = Readonly<Record<string, string>>;

export interface CounterSpec {
  name: string;
  labels?: Labels;
}

export interface HistogramSpec {
  name: string;
  /** Strictly increasing finite upper bounds (seconds); +Inf is implicit. */
  buckets: readonly number[];
  labels?: Labels;
}

export interface MetricBlockSpec {
  counters?: readonly CounterSpec[];
  histograms?: readonly HistogramSpec[];
}

export interface CounterSnapshot {
  name: string;
  labels: Labels;
  value: number;
}

export interface HistogramSnapshot {
  name: string;
  labels: Labels;
  /** Finite upper bounds; `counts` has one more entry, for +Inf. */
  buckets: number[];
  /** Non-cumulative per-bucket counts. */
  counts: number[];
  count: number;
  /** Seconds. */
  sum: number;
}

export interface MetricSnapshot {
  counters: CounterSnapshot[];
  histograms: HistogramSnapshot[];
}

function seriesKey(name: string, labels: Labels | undefined): string {
  if (!labels) return name;
  const keys = Object.keys(labels).sort();
  return keys.length === 0 ? name : `${name}{${keys.map((k) => `${k}=${JSON.stringify(labels[k])}`).join(',')}}`;
}

function cellsFor(spec: MetricBlockSpec): number {
  let n = spec.counters?.length ?? 0;
  for (const h of spec.histograms ?? []) n += HIST_BUCKETS + h.buckets.length + 1;
  return n;
}

function cellsOffset(specBytes: number): number {
  return Math.ceil((SPEC_OFFSET + specBytes) / 8) * 8;
}

/** SharedArrayBuffer size for `spec`. */
export function bytesFor(spec: MetricBlockSpec): number {
  const specBytes = Buffer.byteLength(JSON.stringify(spec), 'utf8');
  return cellsOffset(specBytes) + 8 * cellsFor(spec);
}

const ONE = 1n;

export class MetricBlock {
  private readonly cells: BigInt64Array;
  /** First cell per counter id / histogram id. */
  private readonly counterCell: Int32Array;
  private readonly histCell: Int32Array;
  private readonly counterIds = new Map<string, number>();
  private readonly histIds = new Map<string, number>();

  private constructor(
    readonly buffer: SharedArrayBuffer,
    readonly spec: MetricBlockSpec,
    cellsByteOffset: number,
  ) {
    const counters = spec.counters ?? [];
    const hists = spec.histograms ?? [];
    this.cells = new BigInt64Array(buffer, cellsByteOffset, cellsFor(spec));
    this.counterCell = new Int32Array(counters.length);
    this.histCell = new Int32Array(hists.length);
    let cell = 0;
    counters.forEach((c, id) => {
      this.counterIds.set(seriesKey(c.name, c.labels), id);
      this.counterCell[id] = cell++;
    });
    hists.forEach((h, id) => {
      this.histIds.set(seriesKey(h.name, h.labels), id);
      this.histCell[id] = cell;
      cell += HIST_BUCKETS + h.buckets.length + 1;
    });
  }

  /** Main thread: a zeroed block for `spec`. Throws on duplicate series or bad buckets. */
  static create(spec: MetricBlockSpec): MetricBlock {
    const seen = new Set<string>();
    for (const [kind, list] of [
      ['counter', spec.counters ?? []],
      ['histogram', spec.histograms ?? []],
    ] as const) {
      for (const m of list) {
        const key = `${kind}:${seriesKey(m.name, m.labels)}`;
        if (seen.has(key)) throw new KubeletTsError(`metric block: duplicate ${kind} series ${key.slice(kind.length + 1)}`);
        seen.add(key);
      }
    }
    for (const h of spec.histograms ?? []) {
      h.buckets.forEach((b, i) => {
        if (!Number.isFinite(b) || (i > 0 && b <= h.buckets[i - 1])) {
          throw new KubeletTsError(`metric block: histogram ${h.name} buckets must be finite and strictly increasing`);
        }
      });
    }
    const json = new TextEncoder().encode(JSON.stringify(spec));
    const off = cellsOffset(json.byteLength);
    const sab = new SharedArrayBuffer(off + 8 * cellsFor(spec));
    const i32 = new Int32Array(sab, 0, SPEC_OFFSET / 4);
    i32[H_MAGIC] = METRIC_BLOCK_MAGIC;
    i32[H_VERSION] = METRIC_BLOCK_VERSION;
    i32[H_SPEC_BYTES] = json.byteLength;
    i32[H_CELLS_OFFSET] = off;
    new Uint8Array(sab).set(json, SPEC_OFFSET);
    return new MetricBlock(sab, JSON.parse(new TextDecoder().decode(json)) as MetricBlockSpec, off);
  }

  /** Any thread: a view of an existing block. */
  static attach(sab: SharedArrayBuffer): MetricBlock {
    const i32 = new Int32Array(sab, 0, Math.min(SPEC_OFFSET, sab.byteLength) >> 2);
    if (i32.length < SPEC_OFFSET / 4 || i32[H_MAGIC] !== METRIC_BLOCK_MAGIC) {
      throw new KubeletTsError('buffer is not a metric block (bad magic)');
    }
    if (i32[H_VERSION] !== METRIC_BLOCK_VERSION) {
      throw new KubeletTsError(
        `metric block layout version ${i32[H_VERSION]}, this build expects ${METRIC_BLOCK_VERSION}; ` +
          'main thread and workers run different builds',
      );
    }
    const json = new Uint8Array(sab, SPEC_OFFSET, i32[H_SPEC_BYTES]).slice();
    const spec = JSON.parse(new TextDecoder().decode(json)) as MetricBlockSpec;
    return new MetricBlock(sab, spec, i32[H_CELLS_OFFSET]);
  }

  /** Resolve once, off the hot path. Throws naming the series if it is not in the spec. */
  counterId(name: string, labels?: Labels): number {
    const id = this.counterIds.get(seriesKey(name, labels));
    if (id === undefined) throw new KubeletTsError(`metric block: no counter ${seriesKey(name, labels)} in the spec`);
    return id;
  }

  /** Resolve once, off the hot path. Throws naming the series if it is not in the spec. */
  histogramId(name: string, labels?: Labels): number {
    const id = this.histIds.get(seriesKey(name, labels));
    if (id === undefined) throw new KubeletTsError(`metric block: no histogram ${seriesKey(name, labels)} in the spec`);
    return id;
  }

  /** Any thread. Adds `n` (a non-negative integer) to the counter. */
  inc(counterId: number, n = 1): void {
    Atomics.add(this.cells, this.counterCell[counterId], n === 1 ? ONE : BigInt(n));
  }

  /** Any thread. Records one observation of `seconds`; throws if it is NaN or infinite. */
  observe(histId: number, seconds: number): void {
    if (!Number.isFinite(seconds)) {
      throw new KubeletTsError(
        `metric block: histogram ${this.spec.histograms![histId].name} observed ${seconds}; durations must be finite`,
      );
    }
    const base = this.histCell[histId];
    const bounds = this.spec.histograms![histId].buckets;
    let b = 0;
    while (b < bounds.length && seconds > bounds[b]) b++;
    const cells = this.cells;
    Atomics.add(cells, base + HIST_BUCKETS + b, ONE);
    Atomics.add(cells, base + HIST_SUM_MICROS, BigInt(Math.round(seconds * 1e6)));
    Atomics.add(cells, base + HIST_COUNT, ONE);
  }

  /** Any thread (the main thread on scrape). Plain numbers. */
  snapshot(): MetricSnapshot {
    const cells = this.cells;
    const counters = (this.spec.counters ?? []).map((c, id) => ({
      name: c.name,
      labels: c.labels ?? {},
      value: Number(Atomics.load(cells, this.counterCell[id])),
    }));
    const histograms = (this.spec.histograms ?? []).map((h, id) => {
      const base = this.histCell[id];
      const counts: number[] = [];
      for (let b = 0; b <= h.buckets.length; b++) counts.push(Number(Atomics.load(cells, base + HIST_BUCKETS + b)));
      return {
        name: h.name,
        labels: h.labels ?? {},
        buckets: [...h.buckets],
        counts,
        count: Number(Atomics.load(cells, base + HIST_COUNT)),
        sum: Number(Atomics.load(cells, base + HIST_SUM_MICROS)) / 1e6,
      };
    });
    return { counters, histograms };
  }
}
