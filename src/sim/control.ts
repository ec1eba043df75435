/**
 * SimControl: the in-process control interface of the simulated runtime, for
 * tests and benchmarks (faults, latency, runtime down, images, simulated
 * files, crashes, counters). control-http.ts exposes the same operations as
 * JSON over HTTP on a unix socket; control-client.ts is its client.
 *
 * Every method takes effect immediately and applies to calls that arrive
 * afterwards (an RPC already waiting out its latency is not affected).
 */
import { status } from '@grpc/grpc-js';
import { z } from 'zod';
import { CriError } from '../common/errors.js';
import { ContainerState, PodSandboxState } from '../gen/runtime/v1/api.js';
import type { EventHub } from './events.js';
import { latencySchema, type FaultConfig, type FaultInjector, type LatencySpec } from './faults.js';
import type { ImageStore } from './images.js';
import type { LogWriter } from './logs.js';
import type { NetworkCondition } from './runtime-service.js';
import type { SimRuntime } from './runtime.js';
import type { SandboxNetworkUsage } from './store.js';

/** Mutable knobs shared by the services and the control interface. */
export interface SimSettings {
  pullLatency: LatencySpec | undefined;
  network: NetworkCondition;
}

/** The parts of a running sim that SimControl drives (built by server.ts). */
export interface SimParts {
  rt: SimRuntime;
  faults: FaultInjector;
  images: ImageStore;
  events: EventHub;
  logs: LogWriter;
  settings: SimSettings;
  calls: Map<string, number>;
}

export interface SimStats {
  sandboxes: { total: number; ready: number; notReady: number };
  containers: { total: number; created: number; running: number; exited: number; unknown: number };
  images: number;
  events: { subscribers: number; published: number; dropped: number };
  /** Calls received, by RPC name. */
  calls: Record<string, number>;
  /** Injected failures, by RPC name. */
  injectedErrors: Record<string, number>;
  /** List items left out by truncated lists (faults' dropFraction), by RPC name. */
  droppedListItems: Record<string, number>;
  runtimeDown: boolean;
  logWriteFailures: number;
}

export const containerUsageSchema = z.object({
  workingSetBytes: z.number().int().min(0).optional(),
  writableLayerBytes: z.number().int().min(0).optional(),
});

export const sandboxNetworkSchema = z.object({
  rxBytes: z.number().int().min(0).optional(),
  rxErrors: z.number().int().min(0).optional(),
  txBytes: z.number().int().min(0).optional(),
  txErrors: z.number().int().min(0).optional(),
});

export const pullLatencyInputSchema = z.union([z.number().min(0), latencySchema]).optional();
export type PullLatencyInput = number | LatencySpec | undefined;

export class SimControl {
  constructor(private readonly p: SimParts) {}

  /** Replaces the whole fault configuration (see faults.ts for its shape). */
  setFaults(config: FaultConfig): void {
    this.p.faults.set(config);
  }

  getFaults(): FaultConfig {
    return this.p.faults.get();
  }

  /** Latency of one RPC (proto name, e.g. 'ListContainers') or of 'default'; undefined clears it. */
  setLatency(rpc: string, latency: LatencySpec | undefined): void {
    this.p.faults.setLatency(rpc, latency);
  }

  /** Fraction of calls of one RPC (or 'default') that fail with `code` (default UNAVAILABLE). */
  setErrorRate(rpc: string, errorRate: number, code?: number, message?: string): void {
    this.p.faults.setErrorRate(rpc, errorRate, code, message);
  }

  /**
   * Runtime down: Status reports RuntimeReady=false with `reason`, every other
   * RPC fails UNAVAILABLE, and open event streams end with UNAVAILABLE.
   */
  setRuntimeDown(down: boolean, reason = 'RuntimeDown', message = 'simulated runtime outage'): void {
    if (!down) return this.p.faults.setRuntimeDown(undefined);
    this.p.faults.setRuntimeDown({ reason, message });
    this.p.events.closeAll({ code: status.UNAVAILABLE, details: `runtime is down: ${reason}: ${message}` });
  }

  /** The NetworkReady condition Status reports (containerd: NetworkPluginNotReady when CNI is not initialized). */
  setNetworkReady(
    ready: boolean,
    reason = 'NetworkPluginNotReady',
    message = 'Network plugin returns error: cni plugin not initialized',
  ): void {
    this.p.settings.network = ready ? { ready: true, reason: '', message: '' } : { ready: false, reason, message };
  }

  /** PullImage latency: ms (fixed) or a distribution; undefined for none. */
  setPullLatency(latency: PullLatencyInput): void {
    const v = pullLatencyInputSchema.parse(latency);
    this.p.settings.pullLatency = typeof v === 'number' ? { kind: 'fixed', ms: v } : v;
  }

  /** How long a stopped container takes to die (capped by the stop timeout). */
  setStopDelay(ms: number): void {
    this.p.rt.stopDelayMs = z.number().min(0).parse(ms);
  }

  /** The image filesystem mountpoint ImageFsInfo reports (see ImageStore.fsMountpoint). */
  setImageFsMountpoint(mountpoint: string): void {
    this.p.images.fsMountpoint = z.string().min(1).parse(mountpoint);
  }

  /** Globs over image refs that PullImage accepts (e.g. 'docker.io/library/*'). */
  allowImages(patterns: readonly string[]): void {
    this.p.images.allow(patterns);
  }

  /** Makes images present (and pullable again after removal). */
  seedImages(refs: readonly string[]): void {
    this.p.images.seed(refs);
  }

  /**
   * The container's working set and writable layer as its stats report them from now on (for eviction tests
   * and benchmarks); an omitted figure goes back to the one derived from the id.
   */
  setContainerUsage(containerId: string, usage: { workingSetBytes?: number; writableLayerBytes?: number }): void {
    this.p.rt.getContainer(containerId).usage = containerUsageSchema.parse(usage);
  }

  /**
   * The sandbox's eth0 counters as its stats report them from now on (a host-network sandbox still reports
   * none); an omitted figure goes back to the one derived from the id and age.
   */
  setSandboxNetwork(sandboxId: string, network: SandboxNetworkUsage): void {
    this.p.rt.getSandbox(sandboxId).network = sandboxNetworkSchema.parse(network);
  }

  /** A file that ExecSync `cat PATH` in the container prints. */
  setFile(containerId: string, path: string, content: string): void {
    this.p.rt.getContainer(containerId).files.set(path, content);
  }

  /** Simulates a crash (or exit) of a running container with `exitCode`. */
  killContainer(containerId: string, exitCode: number): void {
    const c = this.p.rt.getContainer(containerId);
    if (c.state !== ContainerState.CONTAINER_RUNNING) {
      throw new CriError(`container "${c.id}" is not running`, 'killContainer', status.FAILED_PRECONDITION);
    }
    this.p.rt.exitContainer(c, exitCode);
  }

  stats(): SimStats {
    const s = this.p.rt.store;
    return {
      sandboxes: {
        total: s.countSandboxes(),
        ready: s.countSandboxes(PodSandboxState.SANDBOX_READY),
        notReady: s.countSandboxes(PodSandboxState.SANDBOX_NOTREADY),
      },
      containers: {
        total: s.countContainers(),
        created: s.countContainers(ContainerState.CONTAINER_CREATED),
        running: s.countContainers(ContainerState.CONTAINER_RUNNING),
        exited: s.countContainers(ContainerState.CONTAINER_EXITED),
        unknown: s.countContainers(ContainerState.CONTAINER_UNKNOWN),
      },
      images: this.p.images.size,
      events: { subscribers: this.p.events.subscribers, published: this.p.events.published, dropped: this.p.events.dropped },
      calls: Object.fromEntries(this.p.calls),
      injectedErrors: Object.fromEntries(this.p.faults.injected),
      droppedListItems: Object.fromEntries(this.p.faults.dropped),
      runtimeDown: this.p.faults.runtimeDown() !== undefined,
      logWriteFailures: this.p.logs.failures,
    };
  }

  /** Resolves when all container output so far is on disk. */
  flushLogs(): Promise<void> {
    return this.p.logs.flush();
  }
}
