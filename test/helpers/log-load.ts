/**
 * Load helpers for the container-log tests and bench: CRI log lines to append
 * to a container's log, and a /healthz sampler that measures how long the
 * agent takes to answer while it serves them.
 */
import { request } from 'node:http';

/** `n` CRI log lines (`<RFC3339Nano> stdout F xxxxxxxxxxxxxxxxxxxx`), one microsecond apart from `startMs`. */
export function criLogLines(n: number, startMs: number): string {
  const base = new Date(startMs).toISOString().slice(0, 19); // to the second
  const ms = startMs % 1000;
  const out: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const us = (ms * 1000 + i) % 1_000_000;
    out[i] = `${base}.${String(us).padStart(6, '0')}000Z stdout F xxxxxxxxxxxxxxxxxxxx\n`;
  }
  return out.join('');
}

export interface HealthzResult {
  /** Samples answered. */
  count: number;
  /** Samples that failed (error or non-200). */
  failed: number;
  /** The slowest answer, ms (a sample still waiting when the next one is due counts until it answers). */
  maxMs: number;
  p99Ms: number;
}

export interface HealthzSamples {
  /** Stops sampling, waits for the sample in flight, and summarises. */
  stop(): Promise<HealthzResult>;
}

/** GET http://127.0.0.1:PORT/healthz every `periodMs`, one at a time; each sample's time from request to the end of the answer. */
export function sampleHealthz(port: number, periodMs = 100): HealthzSamples {
  const times: number[] = [];
  let failed = 0;
  let inFlight: Promise<void> | undefined;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = request({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
        res.resume();
        res.on('end', () => {
          times.push(performance.now() - t0);
          if (res.statusCode !== 200) failed++;
          resolve();
        });
      });
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end();
    });
  const tick = () => {
    if (inFlight) return;
    inFlight = one().finally(() => (inFlight = undefined));
  };
  tick();
  const timer = setInterval(tick, periodMs);
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
      const sorted = [...times].sort((a, b) => a - b);
      return {
        count: times.length,
        failed,
        maxMs: sorted.at(-1) ?? 0,
        p99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
      };
    },
  };
}

/** Resident set size of a process, MiB (Linux /proc). */
export function rssMiB(pid: number, readFile: (p: string) => string): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFile(`/proc/${pid}/status`));
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}
