/**
 * What creating a directory entry costs on this machine, by where it is made
 * (`npm run bench -- fs-create`): in a fresh directory under each `--parents`
 * (default: the OS temp directory, which the benches' agents and raw batches
 * use for their root, log and pod directories, and /var/tmp), `--n` mkdirs
 * (default 1000), then `--n` new files written, then `--n` symlinks: the three
 * kinds of entry a kubelet makes for each pod (pod, volume, plugin and log
 * directories; the hosts and termination-message files; the log link).
 * CPU per call (user + system of this thread), three rounds, each in a new
 * directory, removed at the end.
 *
 *   npm run bench -- fs-create [--parents /tmp,/var/tmp] [--n 1000] [--out NAME]
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, machine, round, writeResults } from './lib/report.js';

const PARENTS = arg('parents', `${tmpdir()},/var/tmp`).split(',').filter(Boolean);
const N = Number(arg('n', '1000'));
const ROUNDS = 3;
const OUT = arg('out', 'fs-create');

/** CPU microseconds per call of `op(i)` for i in 0..N-1. */
function perCall(op: (i: number) => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) op(i);
  const used = process.cpuUsage(start);
  return round((used.user + used.system) / N, 1);
}

interface Row {
  parent: string;
  round: number;
  mkdirUs: number;
  createFileUs: number;
  symlinkUs: number;
}

const rows: Row[] = [];
for (let r = 1; r <= ROUNDS; r++) {
  for (const parent of PARENTS) {
    const dir = mkdtempSync(join(parent, 'kts-fs-create-'));
    try {
      rows.push({
        parent,
        round: r,
        mkdirUs: perCall((i) => mkdirSync(join(dir, `d${i}`))),
        createFileUs: perCall((i) => writeFileSync(join(dir, `f${i}`), '127.0.0.1 localhost\n')),
        symlinkUs: perCall((i) => symlinkSync(join(dir, `f${i}`), join(dir, `l${i}`))),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
const m = machine();
const md = [
  '# Creating a directory entry: CPU per call',
  '',
  `\`npm run bench -- fs-create --parents ${PARENTS.join(',')} --n ${N}\`; ${String(m.date)}, load ${String(m.loadavg)}.`,
  `${N} calls of each kind in a fresh directory under each parent, ${ROUNDS} rounds in turn; CPU (user + system) per call.`,
  '',
  '| parent | round | mkdir (µs) | new file written (µs) | symlink (µs) |',
  '|---|---:|---:|---:|---:|',
  ...rows.map((x) => `| ${x.parent} | ${x.round} | ${x.mkdirUs} | ${x.createFileUs} | ${x.symlinkUs} |`),
].join('\n');
writeResults(OUT, { machine: m, n: N, rows }, md);
console.log(md);
