/**
 * The simulated runtime's state machine, independent of gRPC: sandboxes
 * (READY → NOTREADY → removed) and containers (CREATED → RUNNING → EXITED →
 * removed), the processes' scripted behaviour (behaviour.ts), their logs, and
 * the events they produce. Errors are CriErrors carrying containerd's gRPC code
 * and message shape; the service layer only translates them.
 *
 * Timing: every delay goes through the injected Clock (clock.setTimer), and
 * every timer is tracked so close() leaves nothing behind.
 */
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import type { Clock } from '../common/clock.js';
import { CriError, CriNotFoundError } from '../common/errors.js';
import {
  ContainerEventType,
  ContainerState,
  NamespaceMode,
  PodSandboxState,
  containerStateToJSON,
  type ContainerConfig,
  type ContainerFilter,
  type PodSandboxConfig,
  type PodSandboxFilter,
} from '../gen/runtime/v1/api.js';
import { planContainer, sigtermDisposition, type OutputChunk } from './behaviour.js';
import type { EventHub } from './events.js';
import { execTimeoutError, planExec, type ExecResult } from './exec.js';
import { newId } from './ids.js';
import { InvalidReferenceError, type ImageStore } from './images.js';
import { IpPool } from './ip-pool.js';
import { criLogLines, type LogWriter } from './logs.js';
import { exitReason, toContainerStatus, toSandboxStatus } from './status.js';
import { NanoTime, SimStore, type ContainerRecord, type SandboxRecord } from './store.js';

/** Exit code of a process killed by SIGKILL (128 + 9). */
export const EXIT_SIGKILL = 137;
export const EXIT_SIGTERM = 143;

export interface SimRuntimeDeps {
  clock: Clock;
  images: ImageStore;
  events: EventHub;
  logs: LogWriter;
  /** How long a stopped container takes to die, capped by the StopContainer timeout. Default 0. */
  stopDelayMs?: number;
  /** Pod IP range. Default 10.244.0.0/16. */
  podSubnet?: string;
}

/** Per-container process bookkeeping (timers and exit waiters). */
interface Proc {
  timers: Set<() => void>;
  stopAt?: number;
  waiters: (() => void)[];
}

export class SimRuntime {
  readonly store = new SimStore();
  readonly time: NanoTime;
  stopDelayMs: number;
  podCidr = '';
  private readonly procs = new Map<string, Proc>();
  private readonly timers = new Set<() => void>();
  private readonly ips: IpPool;

  constructor(private readonly deps: SimRuntimeDeps) {
    this.time = new NanoTime(deps.clock);
    this.stopDelayMs = deps.stopDelayMs ?? 0;
    this.ips = new IpPool(deps.podSubnet);
  }

  /** Runs fn after ms on the injected clock; the timer is cancelled by close(). */
  timer(ms: number, fn: () => void): () => void {
    const cancel = this.deps.clock.setTimer(ms, () => {
      this.timers.delete(cancel);
      fn();
    });
    this.timers.add(cancel);
    return () => {
      this.timers.delete(cancel);
      cancel();
    };
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timer(ms, resolve));
  }

  close(): void {
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    for (const p of this.procs.values()) for (const w of p.waiters) w();
    this.procs.clear();
  }

  // ---- lookups -----------------------------------------------------------

  private sandbox(id: string, wrap: (err: string) => string): SandboxRecord {
    const r = this.store.findSandbox(id);
    if (r.kind === 'found') return r.value;
    if (r.kind === 'ambiguous') throw new CriError(wrap(`ambiguous ID "${id}"`), 'sandbox', status.UNKNOWN);
    throw new CriNotFoundError(wrap('not found'), 'sandbox', status.NOT_FOUND);
  }

  private container(id: string, wrap: (err: string) => string): ContainerRecord {
    const r = this.store.findContainer(id);
    if (r.kind === 'found') return r.value;
    if (r.kind === 'ambiguous') throw new CriError(wrap(`ambiguous ID "${id}"`), 'container', status.UNKNOWN);
    throw new CriNotFoundError(wrap('not found'), 'container', status.NOT_FOUND);
  }

  private static findSandboxMsg = (id: string) => (e: string) => `an error occurred when try to find sandbox "${id}": ${e}`;
  private static findContainerMsg = (id: string) => (e: string) => `an error occurred when try to find container "${id}": ${e}`;

  getSandbox(id: string): SandboxRecord {
    return this.sandbox(id, SimRuntime.findSandboxMsg(id));
  }

  getContainer(id: string): ContainerRecord {
    return this.container(id, SimRuntime.findContainerMsg(id));
  }

  // ---- sandboxes ---------------------------------------------------------

  runPodSandbox(config: PodSandboxConfig | undefined, runtimeHandler: string): string {
    const md = config?.metadata;
    if (!config || !md) throw new CriError('sandbox config must include metadata', 'RunPodSandbox', status.UNKNOWN);
    const id = newId();
    const name = [md.name, md.namespace, md.uid, String(md.attempt)].join('_');
    const owner = this.store.reserveSandboxName(name, id);
    if (owner) {
      throw new CriError(
        `failed to reserve sandbox name "${name}": name "${name}" is reserved for "${owner}"`,
        'RunPodSandbox',
        status.UNKNOWN,
      );
    }
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === NamespaceMode.NODE;
    let ip = '';
    try {
      if (!hostNetwork) ip = this.ips.allocate(id);
    } catch (err) {
      this.store.releaseSandboxName(name);
      throw err;
    }
    const rec: SandboxRecord = {
      id,
      config,
      runtimeHandler,
      name,
      createdAt: this.time.now(),
      hostNetwork,
      state: PodSandboxState.SANDBOX_READY,
      ip,
      listEntry: undefined,
    };
    this.store.addSandbox(rec);
    this.emit(ContainerEventType.CONTAINER_CREATED_EVENT, id, id);
    this.emit(ContainerEventType.CONTAINER_STARTED_EVENT, id, id);
    return id;
  }

  /** Kills its containers at once (containerd stops them with timeout 0) and tears down the network. Idempotent. */
  stopPodSandbox(id: string): void {
    const sb = this.getSandbox(id);
    for (const c of this.store.containersOf(sb.id)) {
      if (c.state === ContainerState.CONTAINER_RUNNING || c.state === ContainerState.CONTAINER_UNKNOWN) {
        this.exitContainer(c, EXIT_SIGKILL);
      }
    }
    if (sb.state === PodSandboxState.SANDBOX_NOTREADY) return;
    this.store.setSandboxState(sb, PodSandboxState.SANDBOX_NOTREADY);
    this.ips.release(sb.ip);
    sb.ip = '';
    this.emit(ContainerEventType.CONTAINER_STOPPED_EVENT, sb.id, sb.id);
  }

  /** Stops the sandbox, removes its containers, then the sandbox. An unknown id is not an error. */
  removePodSandbox(id: string): void {
    const found = this.store.findSandbox(id);
    if (found.kind !== 'found') return;
    const sb = found.value;
    this.stopPodSandbox(sb.id);
    for (const c of this.store.containersOf(sb.id)) this.removeContainer(c.id);
    this.emit(ContainerEventType.CONTAINER_DELETED_EVENT, sb.id, sb.id);
    this.store.removeSandbox(sb);
  }

  listSandboxes(filter: PodSandboxFilter | undefined): SandboxRecord[] {
    if (!filter) return this.store.querySandboxes({});
    let id: string | undefined;
    if (filter.id !== '') {
      const r = this.store.findSandbox(filter.id);
      id = r.kind === 'found' ? r.value.id : filter.id;
    }
    return this.store.querySandboxes({
      id,
      state: filter.state?.state,
      labels: nonEmpty(filter.labelSelector),
    });
  }

  // ---- containers --------------------------------------------------------

  createContainer(sandboxId: string, config: ContainerConfig | undefined, sandboxConfig: PodSandboxConfig | undefined): string {
    const sb = this.sandbox(sandboxId, (e) => `failed to find sandbox id "${sandboxId}": ${e}`);
    if (sb.state !== PodSandboxState.SANDBOX_READY) {
      throw new CriNotFoundError(
        `failed to get sandbox container task: no running task found: task ${sb.id} not found: not found`,
        'CreateContainer',
        status.NOT_FOUND,
      );
    }
    const md = config?.metadata;
    if (!config || !md) throw new CriError('container config must include metadata', 'CreateContainer', status.UNKNOWN);
    const ref = config.image?.image ?? '';
    let image;
    try {
      image = this.deps.images.find(ref);
    } catch (err) {
      if (!(err instanceof InvalidReferenceError)) throw err;
      throw new CriError(`failed to resolve image "${ref}": ${err.message}`, 'CreateContainer', status.UNKNOWN);
    }
    if (!image) throw new CriNotFoundError(`failed to resolve image "${ref}": not found`, 'CreateContainer', status.NOT_FOUND);
    const id = newId();
    const smd = sb.config.metadata!;
    const name = [md.name, smd.name, smd.namespace, smd.uid, String(md.attempt)].join('_');
    const owner = this.store.reserveContainerName(name, id);
    if (owner) {
      throw new CriError(
        `failed to reserve container name "${name}": name "${name}" is reserved for "${owner}"`,
        'CreateContainer',
        status.UNKNOWN,
      );
    }
    const logDir = sandboxConfig?.logDirectory || sb.config.logDirectory;
    const logPath = config.logPath ? join(logDir, config.logPath) : '';
    const rec: ContainerRecord = {
      id,
      sandboxId: sb.id,
      name,
      config,
      image: { id: image.id, repoTag: image.repoTag, repoDigest: image.repoDigest },
      logPath,
      logFile: logDir && config.logPath ? logPath : '',
      createdAt: this.time.now(),
      state: ContainerState.CONTAINER_CREATED,
      startedAt: 0n,
      finishedAt: 0n,
      exitCode: 0,
      reason: '',
      message: '',
      files: new Map(),
      listEntry: undefined,
    };
    this.store.addContainer(rec);
    this.emit(ContainerEventType.CONTAINER_CREATED_EVENT, id, sb.id);
    return id;
  }

  startContainer(id: string): void {
    const c = this.getContainer(id);
    if (c.state !== ContainerState.CONTAINER_CREATED) {
      throw new CriError(
        `failed to set starting state for container "${c.id}": container is in ${containerStateToJSON(c.state)} state`,
        'StartContainer',
        status.UNKNOWN,
      );
    }
    const sb = this.store.sandboxes.get(c.sandboxId);
    if (!sb || sb.state !== PodSandboxState.SANDBOX_READY) {
      throw new CriError(`sandbox container "${c.sandboxId}" is not running`, 'StartContainer', status.UNKNOWN);
    }
    c.startedAt = this.time.now();
    this.store.setContainerState(c, ContainerState.CONTAINER_RUNNING);
    const proc: Proc = { timers: new Set(), waiters: [] };
    this.procs.set(c.id, proc);
    this.deps.logs.open(c.logFile);
    this.emit(ContainerEventType.CONTAINER_STARTED_EVENT, c.id, c.sandboxId);

    const plan = planContainer([...c.config.command, ...c.config.args]);
    const byTime = new Map<number, OutputChunk[]>();
    for (const chunk of plan.output) {
      const at = byTime.get(chunk.atMs);
      if (at) at.push(chunk);
      else byTime.set(chunk.atMs, [chunk]);
    }
    for (const [atMs, chunks] of byTime) {
      if (atMs === 0) this.writeOutput(c, chunks);
      else this.procTimer(proc, atMs, () => this.writeOutput(c, chunks));
    }
    if (plan.exit) {
      const code = plan.exit.code;
      this.procTimer(proc, plan.exit.atMs, () => this.exitContainer(c, code));
    }
  }

  /**
   * StopContainer as containerd does it: timeout 0 kills at once (137);
   * otherwise SIGTERM, then SIGKILL at the timeout. What SIGTERM does comes
   * from the command (sigtermDisposition): an untrapped process exits 143
   * after the simulated shutdown time (stopDelayMs, default 0); one that
   * ignores TERM is killed at the timeout (137); `trap "exit K" TERM` exits
   * K. A shutdown slower than the timeout is killed (137). The call returns
   * once the container has exited. Not running: no-op.
   */
  async stopContainer(id: string, timeoutSec: bigint): Promise<void> {
    const c = this.getContainer(id);
    if (c.state !== ContainerState.CONTAINER_RUNNING && c.state !== ContainerState.CONTAINER_UNKNOWN) return;
    const proc = this.procs.get(c.id);
    const timeoutMs = Math.max(0, Number(timeoutSec)) * 1000;
    if (timeoutMs === 0 || !proc) {
      this.exitContainer(c, EXIT_SIGKILL);
      return;
    }
    const term = sigtermDisposition([...c.config.command, ...c.config.args]);
    let afterMs = timeoutMs;
    let code = EXIT_SIGKILL;
    if (term.kind !== 'ignore' && this.stopDelayMs < timeoutMs) {
      afterMs = this.stopDelayMs;
      code = term.kind === 'exit' ? term.code : EXIT_SIGTERM;
    }
    if (afterMs === 0) {
      this.exitContainer(c, code);
      return;
    }
    const at = this.deps.clock.now() + afterMs;
    if (proc.stopAt === undefined || at < proc.stopAt) {
      proc.stopAt = at;
      this.procTimer(proc, afterMs, () => this.exitContainer(c, code));
    }
    await new Promise<void>((resolve) => proc.waiters.push(resolve));
  }

  /** Force-stops a running container, then removes it. An unknown id is not an error. */
  removeContainer(id: string): void {
    const found = this.store.findContainer(id);
    if (found.kind !== 'found') return;
    const c = found.value;
    if (c.state === ContainerState.CONTAINER_RUNNING || c.state === ContainerState.CONTAINER_UNKNOWN) {
      this.exitContainer(c, EXIT_SIGKILL);
    }
    this.store.removeContainer(c);
    this.procs.delete(c.id);
    this.emit(ContainerEventType.CONTAINER_DELETED_EVENT, c.id, c.sandboxId);
  }

  listContainers(filter: ContainerFilter | undefined): ContainerRecord[] {
    if (!filter) return this.store.queryContainers({});
    let id: string | undefined;
    let sandboxId: string | undefined;
    if (filter.id !== '') {
      const r = this.store.findContainer(filter.id);
      id = r.kind === 'found' ? r.value.id : filter.id;
    }
    if (filter.podSandboxId !== '') {
      const r = this.store.findSandbox(filter.podSandboxId);
      sandboxId = r.kind === 'found' ? r.value.id : filter.podSandboxId;
    }
    return this.store.queryContainers({
      id,
      sandboxId,
      state: filter.state?.state,
      labels: nonEmpty(filter.labelSelector),
    });
  }

  /** Ends a running container's process with `exitCode` (simulated crash or natural exit). */
  exitContainer(c: ContainerRecord, exitCode: number): void {
    if (c.state !== ContainerState.CONTAINER_RUNNING && c.state !== ContainerState.CONTAINER_UNKNOWN) return;
    const proc = this.procs.get(c.id);
    c.finishedAt = this.time.now();
    c.exitCode = exitCode;
    c.reason = exitReason(exitCode);
    this.store.setContainerState(c, ContainerState.CONTAINER_EXITED);
    if (proc) {
      for (const cancel of proc.timers) cancel();
      proc.timers.clear();
      for (const w of proc.waiters.splice(0)) w();
    }
    this.emit(ContainerEventType.CONTAINER_STOPPED_EVENT, c.id, c.sandboxId);
  }

  async execSync(id: string, cmd: readonly string[], timeoutSec: bigint): Promise<ExecResult> {
    const c = this.container(id, (e) => `failed to exec in container: failed to find container "${id}" in store: ${e}`);
    if (c.state !== ContainerState.CONTAINER_RUNNING) {
      throw new CriError(`failed to exec in container: container is in ${containerStateToJSON(c.state)} state`, 'ExecSync', status.UNKNOWN);
    }
    const r = planExec(cmd, c.files);
    const timeoutMs = Math.max(0, Number(timeoutSec)) * 1000;
    if (timeoutMs > 0 && (r.forever || r.durationMs > timeoutMs)) {
      await this.sleep(timeoutMs);
      throw execTimeoutError(Number(timeoutSec));
    }
    if (r.forever) {
      const proc = this.procs.get(c.id);
      if (proc && c.state === ContainerState.CONTAINER_RUNNING) await new Promise<void>((resolve) => proc.waiters.push(resolve));
      return { ...r, exitCode: EXIT_SIGKILL };
    }
    if (r.durationMs > 0) await this.sleep(r.durationMs);
    return r;
  }

  /** containerd reopens (creating if need be) the log file at its path. */
  async reopenContainerLog(id: string): Promise<void> {
    const c = this.getContainer(id);
    if (c.state !== ContainerState.CONTAINER_RUNNING) {
      throw new CriError('container is not running', 'ReopenContainerLog', status.UNKNOWN);
    }
    await this.deps.logs.touch(c.logFile);
  }

  // ---- internals ---------------------------------------------------------

  private procTimer(proc: Proc, ms: number, fn: () => void): void {
    const cancel = this.timer(ms, () => {
      proc.timers.delete(cancel);
      fn();
    });
    proc.timers.add(cancel);
  }

  private writeOutput(c: ContainerRecord, chunks: readonly OutputChunk[]): void {
    if (c.logFile === '') return;
    const ns = this.time.now();
    let data = '';
    for (const chunk of chunks) data += criLogLines(ns, chunk.stream, chunk.text);
    this.deps.logs.append(c.logFile, data);
  }

  private emit(type: ContainerEventType, containerId: string, sandboxId: string): void {
    this.deps.events.publish(() => {
      const sb = this.store.sandboxes.get(sandboxId);
      return {
        containerId,
        containerEventType: type,
        createdAt: this.time.now(),
        podSandboxStatus: sb ? toSandboxStatus(sb) : undefined,
        containersStatuses: this.store.containersOf(sandboxId).map(toContainerStatus),
      };
    });
  }
}

function nonEmpty(labels: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!labels) return undefined;
  for (const _ in labels) return labels;
  return undefined;
}
