/**
 * `kubelet-ts-sim`: runs the simulated CRI runtime as a process.
 *
 *   kubelet-ts-sim --listen unix:///tmp/sim/cri.sock [--control unix:///tmp/sim/ctl.sock]
 *     [--seed N] [--latency [RPC=]SPEC ...] [--error-rate RPC=RATE[:CODE] ...]
 *     [--image REF ...] [--allow-image GLOB ...] [--pull-latency MS|SPEC]
 *     [--stop-delay MS] [--pod-subnet CIDR] [--log-format text|json]
 *     [--owner-pid-file PATH [--orphan-grace DURATION]]
 *
 * SPEC is fixed:MS, uniform:MIN:MAX or lognormal:MEDIAN:P99. SIGTERM/SIGINT
 * close the server and exit 0. With --owner-pid-file the runtime also closes
 * and exits 0 once the pid in that file has named no live process for
 * --orphan-grace (a Go duration, default 60s; see src/sim/owner-watch.ts).
 */
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { realClock } from '../common/clock.js';
import { createLogger } from '../common/logger.js';
import { pidAlive, readPidFile } from '../common/pid-file.js';
import { parseDuration } from '../common/duration.js';
import { parseLatency, type FaultConfig, type LatencySpec } from './faults.js';
import { OwnerWatch } from './owner-watch.js';
import { startSimRuntime } from './server.js';
import { errorMessage } from '../common/error-message.js';

const collect = (v: string, prev: string[]) => [...prev, v];

function parseNonNegative(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`want a number >= 0, got "${v}"`);
  return n;
}

function parseGrace(v: string): number {
  let ms: number;
  try {
    ms = parseDuration(v);
  } catch (err) {
    throw new InvalidArgumentError(errorMessage(err));
  }
  if (ms < 0) throw new InvalidArgumentError(`want a duration >= 0, got "${v}"`);
  return ms;
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
    .option('--image-fs-mountpoint <path>', 'mountpoint ImageFsInfo reports (the kubelet statfs()es it for image GC)')
    .option('--log-format <format>', 'text or json', 'text')
    .option('--owner-pid-file <path>', 'file holding the pid of the owning agent; exit when that process stays gone')
    .option('--orphan-grace <duration>', 'how long the owner may be gone before exiting (with --owner-pid-file)', parseGrace, 60_000)
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
    imageFsMountpoint?: string;
    logFormat: string;
    ownerPidFile?: string;
    orphanGrace: number;
  }>();
  const log = createLogger({ format: o.logFormat === 'json' ? 'json' : 'text', verbosity: 0, component: 'kubelet-ts-sim' });
  if (program.getOptionValueSource('orphanGrace') === 'cli' && o.ownerPidFile === undefined) {
    log.error('--orphan-grace needs --owner-pid-file');
    process.exitCode = 2;
    return;
  }
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
      imageFsMountpoint: o.imageFsMountpoint,
    });
    log.info({ endpoint: sim.endpoint, control: sim.controlEndpoint ?? '' }, 'Simulated CRI runtime listening');
    await new Promise<void>((resolve, reject) => {
      let watch: OwnerWatch | undefined;
      const close = () => {
        watch?.stop();
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        sim.close().then(resolve, reject);
      };
      const onSignal = (signal: NodeJS.Signals) => {
        log.info({ signal }, 'Shutting down');
        close();
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      const ownerFile = o.ownerPidFile;
      if (ownerFile !== undefined) {
        watch = new OwnerWatch({
          clock: realClock,
          graceMs: o.orphanGrace,
          readOwner: () => readPidFile(ownerFile),
          isAlive: pidAlive,
          logger: log,
          onOrphaned: close,
        });
        watch.start();
      }
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
