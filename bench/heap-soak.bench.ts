/**
 * Heap soak (`npm run bench -- heap-soak`): the demo node (`npm start`'s
 * agent: the embedded simulated runtime, examples/manifests as static pods,
 * one of them crash-looping) run for --minutes, its main-thread heap
 * (nodejs_heap_size_used_bytes from the read-only /metrics) and RSS
 * (/proc/<pid>/status VmRSS) sampled every --every-s seconds. After the
 * --warmup-min, it reports the median of the first and last five minutes
 * and the least-squares slope of each series (MiB per hour): a leak shows as
 * a slope that does not vanish with the run's length.
 *
 * Writes bench/results/heap-soak.{json,md} (or --out NAME).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from '../test/helpers/poll.js';
import { freePort } from '../test/helpers/ports.js';
import { arg, machine, percentile, round, writeResults } from './lib/report.js';
import { slopePerHour } from './lib/soak-stats.js';

const MINUTES = Number(arg('minutes', '30'));
const EVERY_S = Number(arg('every-s', '10'));
const WARMUP_MIN = Number(arg('warmup-min', '5'));
const OUT = arg('out', 'heap-soak');
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MiB = 1024 * 1024;

interface Sample {
  t: number;
  heapMiB: number;
  rssMiB: number;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function heapMiB(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  if (!m) throw new Error('no nodejs_heap_size_used_bytes in /metrics');
  return Number(m[1]) / MiB;
}

const dir = mkdtempSync(join(tmpdir(), 'kts-heap-soak-'));
const readOnlyPort = await freePort();
const agent = spawn(
  process.execPath,
  [
    join(ROOT, 'bin/kubelet-ts.js'),
    '--container-runtime-endpoint=sim',
    `--pod-manifest-path=${join(ROOT, 'examples/manifests')}`,
    `--root-dir=${dir}`,
    `--pod-logs-dir=${join(dir, 'pod-logs')}`,
    `--container-logs-dir=${join(dir, 'containers')}`,
    '--hostname-override=soak-node',
    `--read-only-port=${readOnlyPort}`,
    `--port=${await freePort()}`,
    `--healthz-port=${await freePort()}`,
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
const stopAgent = () => agent.kill('SIGTERM');
process.on('SIGINT', () => (stopAgent(), process.exit(130)));
const samples: Sample[] = [];
try {
  await pollUntil(
    'the demo agent serving /metrics',
    () =>
      heapMiB(readOnlyPort).then(
        () => true,
        () => false,
      ),
    { timeoutMs: 120_000 },
  );
  const t0 = Date.now();
  while (Date.now() - t0 < MINUTES * 60_000) {
    samples.push({ t: (Date.now() - t0) / 1000, heapMiB: await heapMiB(readOnlyPort), rssMiB: rssMiB(agent.pid!) });
    await new Promise((r) => setTimeout(r, EVERY_S * 1000));
  }
} finally {
  stopAgent();
  await new Promise((r) => agent.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}

const steady = samples.filter((s) => s.t >= WARMUP_MIN * 60);
const first = steady.filter((s) => s.t < (WARMUP_MIN + 5) * 60);
const last = steady.filter((s) => s.t >= MINUTES * 60 - 300);
const med = (xs: Sample[], k: 'heapMiB' | 'rssMiB') =>
  round(
    percentile(
      xs.map((s) => s[k]),
      50,
    ),
    1,
  );
const summary = {
  minutes: MINUTES,
  everyS: EVERY_S,
  warmupMin: WARMUP_MIN,
  samples: samples.length,
  heap: {
    firstFiveMinMedianMiB: med(first, 'heapMiB'),
    lastFiveMinMedianMiB: med(last, 'heapMiB'),
    slopeMiBPerHour: round(slopePerHour(steady.map((s) => ({ t: s.t, y: s.heapMiB }))), 2),
  },
  rss: {
    firstFiveMinMedianMiB: med(first, 'rssMiB'),
    lastFiveMinMedianMiB: med(last, 'rssMiB'),
    slopeMiBPerHour: round(slopePerHour(steady.map((s) => ({ t: s.t, y: s.rssMiB }))), 2),
  },
};
const md = [
  `# Heap soak: the demo node for ${MINUTES} min`,
  '',
  `\`npm run bench -- heap-soak --minutes ${MINUTES}\`; ${samples.length} samples every ${EVERY_S} s; after a ${WARMUP_MIN}-minute warm-up.`,
  '',
  '| series | median, first 5 min after warm-up | median, last 5 min | slope (MiB/h) |',
  '|---|---|---|---|',
  `| main-thread heap used (MiB) | ${summary.heap.firstFiveMinMedianMiB} | ${summary.heap.lastFiveMinMedianMiB} | ${summary.heap.slopeMiBPerHour} |`,
  `| RSS (MiB) | ${summary.rss.firstFiveMinMedianMiB} | ${summary.rss.lastFiveMinMedianMiB} | ${summary.rss.slopeMiBPerHour} |`,
  '',
  `Machine: ${JSON.stringify(machine())}`,
  '',
].join('\n');
writeResults(OUT, { summary, machine: machine(), samples }, md);
console.log(md);
