/**
 * `npm run faults -- [--faults ID,ID] [--runs N] [--pods N] [--seed N] [--shared-machine] [--report-only]`:
 * runs the fault suite (all faults, or those whose id contains one of the
 * --faults words), merges the results into bench/results/faults.json and
 * rewrites the table of docs/reliability.md from that file. Needs the built
 * agent (npm run build) and, for the containerd faults, root: each gets a
 * private containerd (pod network 10.N.0.0/16, N from --octets or KTS_FAULT_OCTETS,
 * else 180-189 in turn), removed after it. The
 * apiserver faults share one private control plane (private-control-plane.ts),
 * brought up before the first and removed at the end.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { PrivateContainerd } from '../helpers/private-containerd.js';
import { containerdControl } from './containerd-control.js';
import { faultOctets, parseOctets } from './octets.js';
import { PrivateControlPlane } from './private-control-plane.js';
import { machineInfo, mergeResults, readResults, renderTable, writeDocTable, type RecordedFault } from './report.js';
import { runFault } from './runner.js';
import { fullSuite } from './suite.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`expected a positive integer, got "${v}"`);
  return n;
};

const program = new Command('faults')
  .option('--faults <ids>', 'comma-separated words; runs the faults whose id contains one')
  .option('--runs <n>', 'injections per fault (default: the full suite’s)', int)
  .option('--pods <n>', 'pods per node (default: the fault’s)', int)
  .option('--seed <n>', 'seed of the random injection moments', int, 1)
  .option('--deadline <s>', 'recovery deadline per injection, seconds', int, 300)
  .option(
    '--octets <list>',
    'pod network octets of the private containerds, one per containerd fault (default: KTS_FAULT_OCTETS, else 180-189)',
  )
  .option('--report-only', 'only rewrite the table of --doc from --out (no fault is run)', false)
  .option('--shared-machine', 'other work ran on the machine meanwhile (said in the docs)', false)
  .option('--out <path>', 'results file', join(ROOT, 'bench/results/faults.json'))
  .option('--doc <path>', 'document whose fault table is rewritten', join(ROOT, 'docs/reliability.md'))
  .parse();
const o = program.opts<{
  faults?: string;
  runs?: number;
  pods?: number;
  seed: number;
  deadline: number;
  octets?: string;
  sharedMachine: boolean;
  reportOnly: boolean;
  out: string;
  doc: string;
}>();

const suite = fullSuite();
const order = suite.map((e) => e.fault.id);
if (o.reportOnly) {
  writeDocTable(o.doc, renderTable(readResults(o.out), order));
  console.log(`wrote ${o.doc} from ${o.out}`);
  process.exit(0);
}
const words = o.faults?.split(',').filter(Boolean);
const chosen = suite.filter((e) => !words || words.some((w) => e.fault.id.includes(w)));
if (chosen.length === 0) {
  console.error(`no fault matches ${o.faults}; faults: ${suite.map((e) => e.fault.id).join(', ')}`);
  process.exit(2);
}

const recorded: RecordedFault[] = [];
const octets = o.octets ? parseOctets(o.octets, '--octets') : faultOctets([180, 181, 182, 183, 184, 185, 186, 187, 188, 189]);
const nextOctet = () => {
  const n = octets.shift();
  if (n === undefined) throw new Error('more containerd faults than pod network octets: give more with --octets');
  return n;
};
const cluster = chosen.some((e) => e.fault.node.source === 'api') ? new PrivateControlPlane() : undefined;
try {
  if (cluster) {
    console.log(`[${new Date().toISOString()}] bringing up a private control plane in ${cluster.dir}`);
    await cluster.up();
  }
  for (const { fault, runs } of chosen) {
    const log = (line: string) => console.log(`[${new Date().toISOString()}] ${line}`);
    log(`== ${fault.id}: ${o.runs ?? runs} runs`);
    const containerd =
      fault.node.runtime === 'containerd' ? new PrivateContainerd(`flt${randomUUID().slice(0, 4)}`, nextOctet()) : undefined;
    try {
      if (containerd) await containerd.up();
      const result = await runFault(fault, {
        runs: o.runs ?? runs,
        seed: o.seed,
        pods: o.pods,
        recoveryDeadlineMs: o.deadline * 1000,
        runtime: containerd ? containerdControl(containerd) : undefined,
        cluster,
        log,
      });
      recorded.push({
        ...result,
        date: new Date().toISOString(),
        command: `npm run faults -- ${process.argv.slice(2).join(' ')}`.trim(),
        machine: machineInfo(),
        sharedMachine: o.sharedMachine,
      });
    } finally {
      await containerd?.down();
    }
    const merged = mergeResults(readResults(o.out), recorded);
    writeFileSync(o.out, `${JSON.stringify(merged, null, 2)}\n`);
    writeDocTable(o.doc, renderTable(merged, order));
    log(`wrote ${o.out} and ${o.doc}`);
  }
} finally {
  await cluster?.down();
}
