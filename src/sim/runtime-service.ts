/**
 * gRPC handlers of the simulated RuntimeService. Semantics live in
 * runtime.ts; this file maps requests and responses and wires the event
 * stream. ListContainers and ListPodSandbox answer with pre-encoded bytes
 * (per-record cached encodings, see status.ts; the unfiltered response is
 * itself reused until the store changes), which the service definition below
 * passes through unchanged.
 */
import { status, type ServerWritableStream } from '@grpc/grpc-js';
import { CriError } from '../common/errors.js';
import {
  ContainerState,
  PodSandboxState,
  type ContainerEventResponse,
  type GetEventsRequest,
  type ListContainersResponse,
  type ListPodSandboxResponse,
} from '../gen/runtime/v1/api.js';
import { RuntimeServiceService, type RuntimeServiceServer } from '../cri/grpc-service.js';
import type { EventHub } from './events.js';
import type { FaultInjector } from './faults.js';
import { noInfo, unary, type RpcContext } from './rpc.js';
import type { SimRuntime } from './runtime.js';
import { SIM_RUNTIME_NAME } from './runtime-name.js';
import { containerStats, sandboxStats } from './stats.js';
import { containerListEntry, PreEncoded, sandboxListEntry, toContainerStatus, toSandboxStatus } from './status.js';

export const SIM_RUNTIME_VERSION = '0.1.0';

function passThrough<T>(serialize: (v: T) => Buffer): (v: T | PreEncoded) => Buffer {
  return (v) => (v instanceof PreEncoded ? v.bytes : serialize(v));
}

/** RuntimeService with list responses that may be pre-encoded. */
export const simRuntimeServiceDefinition = {
  ...RuntimeServiceService,
  listContainers: {
    ...RuntimeServiceService.listContainers,
    responseSerialize: passThrough(RuntimeServiceService.listContainers.responseSerialize),
  },
  listPodSandbox: {
    ...RuntimeServiceService.listPodSandbox,
    responseSerialize: passThrough(RuntimeServiceService.listPodSandbox.responseSerialize),
  },
};

export interface NetworkCondition {
  ready: boolean;
  reason: string;
  message: string;
}

export interface RuntimeServiceDeps {
  rt: SimRuntime;
  faults: FaultInjector;
  events: EventHub;
  ctx: RpcContext;
  network: () => NetworkCondition;
  /** Extra verbose Status info (JSON strings). */
  info: () => Record<string, string>;
}

/** The last unfiltered list response and the store version it was built at. */
class WholeListCache {
  private version = -1;
  private value: PreEncoded | undefined;
  get(version: number, build: () => PreEncoded): PreEncoded {
    if (this.value === undefined || version !== this.version) {
      this.value = build();
      this.version = version;
    }
    return this.value;
  }
}

function isUnfiltered(
  f: { id: string; labelSelector: Record<string, string>; state?: unknown; podSandboxId?: string } | undefined,
): boolean {
  if (!f) return true;
  if (f.id !== '' || f.state !== undefined || (f.podSandboxId ?? '') !== '') return false;
  for (const _ in f.labelSelector) return false;
  return true;
}

export function createRuntimeService(d: RuntimeServiceDeps): RuntimeServiceServer {
  const { rt, ctx } = d;
  const now = () => rt.time.now();
  const allContainers = new WholeListCache();
  const allSandboxes = new WholeListCache();
  return {
    version: unary(ctx, 'Version', () => ({
      version: '0.1.0',
      runtimeName: SIM_RUNTIME_NAME,
      runtimeVersion: SIM_RUNTIME_VERSION,
      runtimeApiVersion: 'v1',
    })),

    status: unary(ctx, 'Status', (req) => {
      const down = d.faults.runtimeDown();
      const net = d.network();
      return {
        status: {
          conditions: [
            { type: 'RuntimeReady', status: !down, reason: down?.reason ?? '', message: down?.message ?? '' },
            { type: 'NetworkReady', status: net.ready, reason: net.reason, message: net.message },
          ],
        },
        info: req.verbose ? d.info() : noInfo(),
        runtimeHandlers: [],
        features: undefined,
      };
    }),

    runPodSandbox: unary(ctx, 'RunPodSandbox', (req) => ({ podSandboxId: rt.runPodSandbox(req.config, req.runtimeHandler) })),

    stopPodSandbox: unary(ctx, 'StopPodSandbox', (req) => {
      rt.stopPodSandbox(req.podSandboxId);
      return {};
    }),

    removePodSandbox: unary(ctx, 'RemovePodSandbox', (req) => {
      rt.removePodSandbox(req.podSandboxId);
      return {};
    }),

    podSandboxStatus: unary(ctx, 'PodSandboxStatus', (req) => {
      const sb = rt.getSandbox(req.podSandboxId);
      return {
        status: toSandboxStatus(sb),
        info: req.verbose ? { info: JSON.stringify({ pid: 1, runtimeHandler: sb.runtimeHandler, config: sb.config.metadata }) } : noInfo(),
        containersStatuses: rt.store.containersOf(sb.id).map(toContainerStatus),
        timestamp: now(),
      };
    }),

    listPodSandbox: unary(ctx, 'ListPodSandbox', (req) => {
      const cut = d.faults.truncate('ListPodSandbox', () => rt.listSandboxes(req.filter));
      if (cut) return PreEncoded.concat(cut.map(sandboxListEntry)) as unknown as ListPodSandboxResponse;
      const build = () => PreEncoded.concat(rt.listSandboxes(req.filter).map(sandboxListEntry));
      const res = isUnfiltered(req.filter) ? allSandboxes.get(rt.store.sandboxesVersion, build) : build();
      return res as unknown as ListPodSandboxResponse;
    }),

    createContainer: unary(ctx, 'CreateContainer', (req) => ({
      containerId: rt.createContainer(req.podSandboxId, req.config, req.sandboxConfig),
    })),

    startContainer: unary(ctx, 'StartContainer', (req) => {
      rt.startContainer(req.containerId);
      return {};
    }),

    stopContainer: unary(ctx, 'StopContainer', async (req) => {
      await rt.stopContainer(req.containerId, req.timeout);
      return {};
    }),

    removeContainer: unary(ctx, 'RemoveContainer', (req) => {
      rt.removeContainer(req.containerId);
      return {};
    }),

    listContainers: unary(ctx, 'ListContainers', (req) => {
      const cut = d.faults.truncate('ListContainers', () => rt.listContainers(req.filter));
      if (cut) return PreEncoded.concat(cut.map(containerListEntry)) as unknown as ListContainersResponse;
      const build = () => PreEncoded.concat(rt.listContainers(req.filter).map(containerListEntry));
      const res = isUnfiltered(req.filter) ? allContainers.get(rt.store.containersVersion, build) : build();
      return res as unknown as ListContainersResponse;
    }),

    containerStatus: unary(ctx, 'ContainerStatus', (req) => {
      const c = rt.getContainer(req.containerId);
      return {
        status: toContainerStatus(c),
        info: req.verbose
          ? {
              info: JSON.stringify({
                sandboxID: c.sandboxId,
                pid: c.state === ContainerState.CONTAINER_RUNNING ? 1 : 0,
                config: { command: c.config.command, args: c.config.args },
              }),
            }
          : noInfo(),
      };
    }),

    execSync: unary(ctx, 'ExecSync', async (req) => {
      const r = await rt.execSync(req.containerId, req.cmd, req.timeout);
      return { stdout: Buffer.from(r.stdout), stderr: Buffer.from(r.stderr), exitCode: r.exitCode };
    }),

    // No streaming server: exec, attach and port-forward need a real runtime (docs/sim.md).
    exec: unary(ctx, 'Exec', () => notStreaming('Exec')),
    attach: unary(ctx, 'Attach', () => notStreaming('Attach')),
    portForward: unary(ctx, 'PortForward', () => notStreaming('PortForward')),

    containerStats: unary(ctx, 'ContainerStats', (req) => {
      const c = rt.getContainer(req.containerId);
      return { stats: containerStats(c, now()) };
    }),

    listContainerStats: unary(ctx, 'ListContainerStats', (req) => {
      const f = req.filter;
      const list = rt.listContainers(
        f ? { id: f.id, podSandboxId: f.podSandboxId, state: undefined, labelSelector: f.labelSelector } : undefined,
      );
      const t = now();
      return { stats: list.map((c) => containerStats(c, t)) };
    }),

    podSandboxStats: unary(ctx, 'PodSandboxStats', (req) => {
      const sb = rt.getSandbox(req.podSandboxId);
      if (sb.state !== PodSandboxState.SANDBOX_READY) {
        throw new CriError(
          `failed to get pod sandbox stats since sandbox container "${sb.id}" is not in ready state: unavailable`,
          'PodSandboxStats',
          status.UNAVAILABLE,
        );
      }
      return { stats: sandboxStats(sb, rt.store.containersOf(sb.id), now()) };
    }),

    listPodSandboxStats: unary(ctx, 'ListPodSandboxStats', (req) => {
      const f = req.filter;
      const t = now();
      const list = rt.listSandboxes(
        f
          ? { id: f.id, state: { state: PodSandboxState.SANDBOX_READY }, labelSelector: f.labelSelector }
          : { id: '', state: { state: PodSandboxState.SANDBOX_READY }, labelSelector: {} },
      );
      return { stats: list.map((sb) => sandboxStats(sb, rt.store.containersOf(sb.id), t)) };
    }),

    updateRuntimeConfig: unary(ctx, 'UpdateRuntimeConfig', (req) => {
      const cidr = req.runtimeConfig?.networkConfig?.podCidr;
      if (cidr) rt.podCidr = cidr;
      return {};
    }),

    reopenContainerLog: unary(ctx, 'ReopenContainerLog', async (req) => {
      await rt.reopenContainerLog(req.containerId);
      return {};
    }),

    getContainerEvents: (call: ServerWritableStream<GetEventsRequest, ContainerEventResponse>) => {
      ctx.calls.set('GetContainerEvents', (ctx.calls.get('GetContainerEvents') ?? 0) + 1);
      const decision = d.faults.decide('GetContainerEvents');
      if (decision.error) {
        call.emit('error', { code: decision.error.grpcCode, details: decision.error.message });
        return;
      }
      d.events.subscribe(call);
    },
  };
}

function notStreaming(rpc: string): never {
  throw new CriError(
    `${rpc} is not implemented by the simulated runtime: it has no streaming server (use containerd for exec, attach and port-forward)`,
    rpc,
    status.UNIMPLEMENTED,
  );
}
