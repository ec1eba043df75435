/**
 * What glibc's mmap threshold costs a large Buffer (`npm run bench -- malloc-threshold`).
 *
 * The agent's shebang fixes `MALLOC_MMAP_THRESHOLD_` (bin/kubelet-ts.js). A
 * buffer above the threshold is a fresh mmap, zero-filled by the kernel page
 * by page on first touch and unmapped when freed; one below it comes from a
 * malloc arena and reuses memory already mapped. The agent allocates such
 * buffers for every CRI list response of a large node (the DATA frames joined
 * into one message) and for every /pods answer.
 *
 * For each threshold (and glibc's dynamic default), a child node process with
 * the agent's node flags and `MALLOC_ARENA_MAX=2` joins 1 KiB chunks into one
 * buffer of 0.5, 2 and 8 MiB (`Buffer.concat`, as src/cri/h2-channel.ts does)
 * and reports the mean time per join and the process's user and system CPU.
 *
 * Writes bench/results/malloc-threshold.{json,md} (or --out NAME).
 * Args: --thresholds 131072,8388608,dynamic  --iterations 200
 */
import { spawnSync } from 'node:child_process';
import { arg, machine, round, writeResults } from './lib/report.js';
import { binLaunch } from '../test/e2e/agent-harness.js';

const THRESHOLDS = arg('thresholds', '131072,8388608,dynamic').split(',').filter(Boolean);
const ITERATIONS = Number(arg('iterations', '200'));
const SIZES_MIB = [0.5, 2, 8];

// Runs in the child: one line of JSON per size.
const CHILD = `
const sizes = ${JSON.stringify(SIZES_MIB)}, iterations = ${ITERATIONS};
const rows = [];
for (const mib of sizes) {
  const chunks = [];
  for (let n = 0; n < mib * 1024; n++) chunks.push(Buffer.alloc(1024, n & 0xff));
  let sink = 0;
  for (let i = 0; i < 20; i++) sink += Buffer.concat(chunks).length;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) sink += Buffer.concat(chunks).length;
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  rows.push({ mib, meanMs: wallMs / iterations, userMs: cpu.user / 1000 / iterations, systemMs: cpu.system / 1000 / iterations, sink });
}
console.log(JSON.stringify(rows));
`;

interface Row {
  threshold: string;
  mib: number;
  meanMs: number;
  userMs: number;
  systemMs: number;
}

const { env: agentEnv, nodeFlags } = binLaunch();
const rows: Row[] = [];
for (const threshold of THRESHOLDS) {
  const env: NodeJS.ProcessEnv = { ...process.env, ...agentEnv };
  delete env.MALLOC_MMAP_THRESHOLD_;
  if (threshold !== 'dynamic') env.MALLOC_MMAP_THRESHOLD_ = threshold;
  const r = spawnSync(process.execPath, [...nodeFlags, '-e', CHILD], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`child for threshold ${threshold} failed (${r.status}): ${r.stderr}`);
  for (const c of JSON.parse(r.stdout) as Omit<Row, 'threshold'>[]) {
    const row = { threshold, mib: c.mib, meanMs: round(c.meanMs, 3), userMs: round(c.userMs, 3), systemMs: round(c.systemMs, 3) };
    rows.push(row);
    console.log(`threshold ${threshold}: ${c.mib} MiB join ${row.meanMs} ms (user ${row.userMs}, system ${row.systemMs})`);
  }
}

const md = [
  "# Large buffers against glibc's mmap threshold",
  '',
  `\`npm run bench -- malloc-threshold\`, ${ITERATIONS} joins of 1 KiB chunks per size, each threshold in its own`,
  `process with the agent's node flags (\`${nodeFlags.join(' ')}\`) and \`MALLOC_ARENA_MAX=2\`; "dynamic" is glibc's default.`,
  '',
  '| threshold | buffer (MiB) | mean per join (ms) | user CPU (ms) | system CPU (ms) |',
  '|---|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.threshold} | ${r.mib} | ${r.meanMs} | ${r.userMs} | ${r.systemMs} |`),
].join('\n');
writeResults(arg('out', 'malloc-threshold'), { machine: machine(), iterations: ITERATIONS, nodeFlags, rows }, md);
