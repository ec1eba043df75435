/**
 * Benchmark dispatcher: `npm run bench -- <name> [args]`. Each benchmark
 * writes its results under bench/results/ (JSON + markdown).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const BENCHES: Record<string, string> = {
  'sim-scale': 'sim-scale.ts',
  merge: 'merge.bench.ts',
  'shared-memory': 'shared-memory.bench.ts',
  pleg: 'pleg.bench.ts',
  startup: 'startup.bench.ts',
  micro: 'micro.bench.ts',
  charts: 'charts.ts',
  'apiserver-traffic': 'apiserver-traffic.bench.ts',
  'pod-startup-sli': 'pod-startup-sli.bench.ts',
  volumes: 'volumes.bench.ts',
  lifecycle: 'lifecycle.bench.ts',
  probes: 'probes.bench.ts',
  peer: 'peer.bench.ts',
  'evented-pleg': 'evented-pleg.bench.ts',
  'relist-phases': 'relist-phases.bench.ts',
  'relist-decode': 'relist-decode.bench.ts',
  memory: 'memory.bench.ts',
  'cri-transport': 'cri-transport.bench.ts',
  'log-serving': 'log-serving.bench.ts',
  'exec-latency': 'exec-latency.bench.ts',
  'heap-soak': 'heap-soak.bench.ts',
  soak: 'soak.bench.ts',
  cgroups: 'cgroups-peer.bench.ts',
  eviction: 'eviction.bench.ts',
  'malloc-threshold': 'malloc-threshold.bench.ts',
  'pods-endpoint': 'pods-endpoint.bench.ts',
  'fs-create': 'fs-create.bench.ts',
  steady: 'steady.bench.ts',
};

const [name, ...rest] = process.argv.slice(2);
if (!name || !(name in BENCHES)) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [args]`);
  process.exit(2);
}
const file = join(here, BENCHES[name]);
if (!existsSync(file)) {
  console.error(`benchmark ${name} (${file}) does not exist yet`);
  process.exit(2);
}
const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', file, ...rest], { stdio: 'inherit' });
// A signal sent to this dispatcher alone (kill, pkill) reaches the benchmark, which cleans up its agents and pods.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : 15) : 1)));
