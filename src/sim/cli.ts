/**
 * `kubelet-ts-sim`: runs the simulated CRI runtime as a process.
 *
 *   kubelet-ts-sim --listen unix:///tmp/sim/cri.sock [--control unix:///tmp/sim/ctl.sock]
 *     [--seed N] [--latency [RPC=]SPEC ...] [--error-rate RPC=RATE[:CODE] ...]
 *     [--image REF ...] [--allow-image GLOB ...] [--pull-latency MS|SPEC]
 *     [--stop-delay MS] [--pod-subnet CIDR] [--log-format text|json]
 *
 * SPEC is fixed:MS, uniform:MIN:MAX or lognormal:MEDIAN:P99. SIGTERM/SIGINT
 * close the server and exit 0.
 */
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { createLogger } from '../common/logger.js';
import { parseLatency, type FaultConfig, type LatencySpec } from './faults.js';
import { startSimRuntime } from './server.js';

const collect = (v: string, prev: string[]) => [...prev, v];

function parseNonNegative(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`want a number >= 0, got "${v}"`);
  return n;
}

function latencyOrMs(v: string): LatencySpec {
  if (/^\d+(\.\d+)?$/.test(v)) return { kind: 'fixed', ms: Number(v) };
  return parseLatency(v);
}

/** Builds a FaultConfig from --latency and --error-rate values. */
export function faultsFromFlags(latency: string[], errorRates: string[]): FaultConfig {
  const cfg: FaultConfig = { rpcs: {} };
  const entry = (rpc: string) => {
    if (rpc === 'default') return (cfg.default ??= {});
    return (cfg.rpcs![rpc] ??= {});
  };
  for (const l of latency) {
    const eq = l.indexOf('=');
    const rpc = eq < 0 ? 'default' : l.slice(0, eq);
    entry(rpc).latency = latencyOrMs(eq < 0 ? l : l.slice(eq + 1));
  }
  for (const e of errorRates) {
    const m = /^([A-Za-z]+)=([0-9.]+)(?::(\d+))?$/.exec(e);
    if (!m) throw new InvalidArgumentError(`bad --error-rate "${e}": want RPC=RATE[:CODE], e.g. ListContainers=0.1:14`);
    const f = entry(m[1]);
    f.errorRate = Number(m[2]);
    if (m[3] !== undefined) f.errorCode = Number(m[3]);
  }
  return cfg;
}

export async function main(argv: readonly string[]): Promise<void> {
  const program = new Command('kubelet-ts-sim')
    .description('Simulated CRI runtime (RuntimeService + ImageService) for kubelet-ts tests and benchmarks')
    .requiredOption('--listen <endpoint>', 'CRI endpoint, unix:///path/cri.sock')
    .option('--control <endpoint>', 'JSON control endpoint, unix:///path/ctl.sock')
    .option('--seed <n>', 'seed of the fault RNG', (v) => Math.trunc(parseNonNegative(v)), 1)
    .option('--latency <spec>', 'latency [RPC=]fixed:MS|uniform:MIN:MAX|lognormal:MEDIAN:P99 (repeatable)', collect, [] as string[])
    .option('--error-rate <spec>', 'injected error rate RPC=RATE[:CODE] (repeatable; RPC may be "default")', collect, [] as string[])
    .option('--image <ref>', 'image present at start (repeatable)', collect, [] as string[])
    .option('--allow-image <glob>', 'refs PullImage accepts (repeatable)', collect, [] as string[])
    .option('--pull-latency <spec>', 'PullImage latency: MS or a latency SPEC')
    .option('--stop-delay <ms>', 'how long a stopped container takes to die (capped by the stop timeout)', parseNonNegative, 0)
    .option('--pod-subnet <cidr>', 'pod IP range', '10.244.0.0/16')
    .option('--log-format <format>', 'text or json', 'text')
    .exitOverride();

  try {
    program.parse([...argv], { from: 'user' });
  } catch (err) {
    process.exitCode = (err as { exitCode?: number }).exitCode ?? 2;
    return;
  }
  const o = program.opts<{
    listen: string;
    control?: string;
    seed: number;
    latency: string[];
    errorRate: string[];
    image: string[];
    allowImage: string[];
    pullLatency?: string;
    stopDelay: number;
    podSubnet: string;
    logFormat: string;
  }>();
  const log = createLogger({ format: o.logFormat === 'json' ? 'json' : 'text', verbosity: 0, component: 'kubelet-ts-sim' });
  try {
    const sim = await startSimRuntime({
      listen: o.listen,
      controlListen: o.control,
      seed: o.seed,
      images: o.image,
      allowImages: o.allowImage,
      faults: faultsFromFlags(o.latency, o.errorRate),
      pullLatency: o.pullLatency === undefined ? undefined : latencyOrMs(o.pullLatency),
      stopDelayMs: o.stopDelay,
      podSubnet: o.podSubnet,
    });
    log.info({ endpoint: sim.endpoint, control: sim.controlEndpoint ?? '' }, 'Simulated CRI runtime listening');
    await new Promise<void>((resolve, reject) => {
      const stop = (signal: NodeJS.Signals) => {
        log.info({ signal }, 'Shutting down');
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        sim.close().then(resolve, reject);
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
  } catch (err) {
    log.error({ err }, 'kubelet-ts-sim failed');
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error('kubelet-ts-sim:', err);
    process.exitCode = 1;
  });
}
