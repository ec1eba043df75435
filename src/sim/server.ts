/**
 * Starts the simulated CRI runtime: a grpc-js server with the RuntimeService
 * and ImageService on a unix socket (16 MiB message limits, like the kubelet's
 * CRI client), plus optionally the HTTP control socket. Usable in-process
 * (tests) and from the CLI (cli.ts).
 */
import type { Server as HttpServer } from 'node:http';
import { dirname } from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { realClock, type Clock } from '../common/clock.js';
import { ImageServiceService } from '../cri/grpc-service.js';
import { SimControl, type SimParts } from './control.js';
import { startControlServer } from './control-http.js';
import { EventHub } from './events.js';
import { FaultInjector, seededRandom, type FaultConfig, type LatencySpec } from './faults.js';
import { createImageService } from './image-service.js';
import { DEFAULT_IMAGES, ImageStore } from './images.js';
import { LogWriter } from './logs.js';
import type { RpcContext } from './rpc.js';
import { createRuntimeService, simRuntimeServiceDefinition } from './runtime-service.js';
import { SimRuntime } from './runtime.js';
import { removeStaleSocket, unixPath } from './socket.js';

export const SIM_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface SimRuntimeOptions {
  /** unix:///path/cri.sock */
  listen: string;
  clock?: Clock;
  /** Seed of the fault RNG (latency draws, error coin flips). Default 1. */
  seed?: number;
  /** Images present at start, in addition to the defaults (busybox and pause). */
  images?: string[];
  /** Replace the default images instead of adding to them. */
  replaceDefaultImages?: boolean;
  /** Globs of refs PullImage accepts. */
  allowImages?: string[];
  faults?: FaultConfig;
  pullLatency?: LatencySpec;
  /** See SimControl.setStopDelay. Default 0. */
  stopDelayMs?: number;
  /** Pod IP range. Default 10.244.0.0/16. */
  podSubnet?: string;
  /** See SimControl.setImageFsMountpoint. Default: the directory of the unix socket (the filesystem the sim runs on). */
  imageFsMountpoint?: string;
  /** unix:///path/ctl.sock: also serve the JSON control interface there. */
  controlListen?: string;
}

export interface SimRuntimeHandle {
  /** The CRI endpoint, unix:///path (as given in `listen`). */
  endpoint: string;
  /** The control endpoint when controlListen was given. */
  controlEndpoint?: string;
  control: SimControl;
  /** Stops accepting calls, ends event streams, cancels all timers; waits up to 1 s for calls in flight. */
  close(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 1000;

export async function startSimRuntime(opts: SimRuntimeOptions): Promise<SimRuntimeHandle> {
  const clock = opts.clock ?? realClock;
  const socketPath = unixPath(opts.listen);
  const images = new ImageStore(opts.replaceDefaultImages ? [] : DEFAULT_IMAGES);
  images.seed(opts.images ?? []);
  images.allow(opts.allowImages ?? []);
  images.fsMountpoint =
    opts.imageFsMountpoint ?? (opts.listen.startsWith('unix://') ? dirname(opts.listen.slice('unix://'.length)) : images.fsMountpoint);
  const faults = new FaultInjector(opts.seed ?? 1, opts.faults);
  const events = new EventHub();
  const logs = new LogWriter();
  const rt = new SimRuntime({ clock, images, events, logs, stopDelayMs: opts.stopDelayMs, podSubnet: opts.podSubnet });
  const parts: SimParts = {
    rt,
    faults,
    images,
    events,
    logs,
    settings: { pullLatency: opts.pullLatency, network: { ready: true, reason: '', message: '' } },
    calls: new Map(),
  };
  const control = new SimControl(parts);
  const ctx: RpcContext = { faults, calls: parts.calls, timer: (ms, fn) => rt.timer(ms, fn) };
  const pullRand = seededRandom((opts.seed ?? 1) ^ 0x5eed);

  const server = new Server({
    'grpc.max_receive_message_length': SIM_MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': SIM_MAX_MESSAGE_BYTES,
  });
  server.addService(
    simRuntimeServiceDefinition,
    createRuntimeService({
      rt,
      faults,
      events,
      ctx,
      network: () => parts.settings.network,
      info: () => ({
        config: JSON.stringify({
          podCidr: rt.podCidr,
          stopDelayMs: rt.stopDelayMs,
          allowImages: images.allowedPatterns(),
          faults: faults.get(),
        }),
      }),
    }),
  );
  server.addService(
    ImageServiceService,
    createImageService({
      images,
      ctx,
      nowNs: () => rt.time.now(),
      pullLatency: () => parts.settings.pullLatency,
      rand: pullRand,
      sleep: (ms) => rt.sleep(ms),
    }),
  );

  removeStaleSocket(socketPath);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );

  let http: HttpServer | undefined;
  if (opts.controlListen) {
    try {
      http = await startControlServer(control, unixPath(opts.controlListen));
    } catch (err) {
      server.forceShutdown();
      throw err;
    }
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      events.closeAll();
      rt.close();
      const httpClosed = http
        ? new Promise<void>((resolve) => {
            http.close(() => resolve());
            http.closeAllConnections();
          })
        : Promise.resolve();
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      });
      await httpClosed;
      await logs.flush();
    })());

  return { endpoint: `unix://${socketPath}`, controlEndpoint: opts.controlListen, control, close };
}
