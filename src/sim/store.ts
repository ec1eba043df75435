/**
 * The simulated runtime's records: sandboxes and containers in Maps, with
 * secondary indexes (containers by sandbox and by state; sandboxes by state;
 * label indexes for both) so filtered lists at 10k entries touch only the
 * candidates. All mutation of indexed fields goes through the store's setters,
 * which keep the indexes and the cached list encodings consistent.
 *
 * Single-threaded: callers are the gRPC handlers and timers on one event loop.
 */
import type { Clock } from '../common/clock.js';
import { ContainerState, PodSandboxState, type ContainerConfig, type PodSandboxConfig } from '../gen/runtime/v1/api.js';
import { lookupId, type PrefixLookup } from './ids.js';

export interface SandboxRecord {
  readonly id: string;
  readonly config: PodSandboxConfig;
  readonly runtimeHandler: string;
  /** The reserved sandbox name (containerd's makeSandboxName). */
  readonly name: string;
  readonly createdAt: bigint;
  readonly hostNetwork: boolean;
  state: PodSandboxState;
  /** Pod IP; '' for host-network sandboxes and after the network is torn down. */
  ip: string;
  /** eth0 counters set through SimControl.setSandboxNetwork, in place of the ones derived from the id and age. */
  network?: SandboxNetworkUsage;
  /** Cached encoding of this sandbox as a ListPodSandboxResponse item; undefined when stale. */
  listEntry: Uint8Array | undefined;
}

export interface SandboxNetworkUsage {
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

export interface ImageIdentity {
  /** sha256:<hex> */
  readonly id: string;
  /** First repo tag, e.g. docker.io/library/busybox:1.36 */
  readonly repoTag: string;
  /** First repo digest, e.g. docker.io/library/busybox@sha256:<hex> */
  readonly repoDigest: string;
}

export interface ContainerRecord {
  readonly id: string;
  readonly sandboxId: string;
  /** The reserved container name (containerd's makeContainerName). */
  readonly name: string;
  readonly config: ContainerConfig;
  readonly image: ImageIdentity;
  /** Full log path reported in ContainerStatus ('' when the config has no log_path). */
  readonly logPath: string;
  /** File the simulated output goes to; '' when no log is written. */
  readonly logFile: string;
  readonly createdAt: bigint;
  state: ContainerState;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  message: string;
  /** Simulated files for ExecSync `cat` (path → content). */
  readonly files: Map<string, string>;
  /** Usage set through SimControl.setContainerUsage, in place of the figures derived from the id. */
  usage?: { workingSetBytes?: number; writableLayerBytes?: number };
  /** Cached encoding of this container as a ListContainersResponse item; undefined when stale. */
  listEntry: Uint8Array | undefined;
}

export type Labels = Readonly<Record<string, string>>;

/** key → value → ids carrying that label pair. */
export class LabelIndex {
  private readonly byKey = new Map<string, Map<string, Set<string>>>();

  add(id: string, labels: Labels): void {
    for (const k in labels) {
      let byValue = this.byKey.get(k);
      if (!byValue) this.byKey.set(k, (byValue = new Map<string, Set<string>>()));
      let ids = byValue.get(labels[k]);
      if (!ids) byValue.set(labels[k], (ids = new Set()));
      ids.add(id);
    }
  }

  remove(id: string, labels: Labels): void {
    for (const k in labels) {
      const byValue = this.byKey.get(k);
      const ids = byValue?.get(labels[k]);
      if (!ids) continue;
      ids.delete(id);
      if (ids.size === 0) byValue!.delete(labels[k]);
      if (byValue!.size === 0) this.byKey.delete(k);
    }
  }

  /** The smallest id set any match must belong to; undefined for an empty selector. */
  narrowest(selector: Labels): ReadonlySet<string> | undefined {
    let best: ReadonlySet<string> | undefined;
    for (const k in selector) {
      const ids = this.byKey.get(k)?.get(selector[k]);
      if (!ids) return EMPTY;
      if (!best || ids.size < best.size) best = ids;
    }
    return best;
  }
}

const EMPTY: ReadonlySet<string> = new Set();

export function matchesLabels(labels: Labels, selector: Labels): boolean {
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

export interface ContainerQuery {
  id?: string;
  sandboxId?: string;
  state?: ContainerState;
  labels?: Labels;
}

export interface SandboxQuery {
  id?: string;
  state?: PodSandboxState;
  labels?: Labels;
}

/**
 * Strictly increasing nanosecond timestamps from the injected clock: the clock's
 * milliseconds scaled to ns, bumped by 1 ns when two events share a millisecond.
 */
export class NanoTime {
  private last = 0n;
  constructor(private readonly clock: Clock) {}
  now(): bigint {
    const t = BigInt(this.clock.now()) * 1_000_000n;
    this.last = t > this.last ? t : this.last + 1n;
    return this.last;
  }
}

export class SimStore {
  readonly sandboxes = new Map<string, SandboxRecord>();
  readonly containers = new Map<string, ContainerRecord>();
  /** Bumped on every container add/remove/state change (any change to a ListContainers item). */
  containersVersion = 0;
  /** Bumped on every sandbox add/remove/state change (any change to a ListPodSandbox item). */
  sandboxesVersion = 0;
  private readonly containersBySandbox = new Map<string, Set<string>>();
  private readonly containersByState = new Map<ContainerState, Set<string>>();
  private readonly sandboxesByState = new Map<PodSandboxState, Set<string>>();
  private readonly containerLabels = new LabelIndex();
  private readonly sandboxLabels = new LabelIndex();
  /** Reserved names → owner id (sandboxes and containers share containerd's rule: unique per kind). */
  private readonly sandboxNames = new Map<string, string>();
  private readonly containerNames = new Map<string, string>();

  findSandbox(idOrPrefix: string): PrefixLookup<SandboxRecord> {
    return lookupId(this.sandboxes, idOrPrefix);
  }

  findContainer(idOrPrefix: string): PrefixLookup<ContainerRecord> {
    return lookupId(this.containers, idOrPrefix);
  }

  /** Returns the id holding the name, or undefined once reserved for `id`. */
  reserveSandboxName(name: string, id: string): string | undefined {
    return reserve(this.sandboxNames, name, id);
  }

  reserveContainerName(name: string, id: string): string | undefined {
    return reserve(this.containerNames, name, id);
  }

  releaseContainerName(name: string): void {
    this.containerNames.delete(name);
  }

  releaseSandboxName(name: string): void {
    this.sandboxNames.delete(name);
  }

  addSandbox(rec: SandboxRecord): void {
    this.sandboxes.set(rec.id, rec);
    this.sandboxesVersion++;
    setAdd(this.sandboxesByState, rec.state, rec.id);
    this.sandboxLabels.add(rec.id, rec.config.labels);
    this.containersBySandbox.set(rec.id, new Set());
  }

  removeSandbox(rec: SandboxRecord): void {
    this.sandboxes.delete(rec.id);
    this.sandboxesVersion++;
    setDelete(this.sandboxesByState, rec.state, rec.id);
    this.sandboxLabels.remove(rec.id, rec.config.labels);
    this.containersBySandbox.delete(rec.id);
    this.releaseSandboxName(rec.name);
  }

  setSandboxState(rec: SandboxRecord, state: PodSandboxState): void {
    if (rec.state === state) return;
    setDelete(this.sandboxesByState, rec.state, rec.id);
    rec.state = state;
    setAdd(this.sandboxesByState, state, rec.id);
    rec.listEntry = undefined;
    this.sandboxesVersion++;
  }

  addContainer(rec: ContainerRecord): void {
    this.containers.set(rec.id, rec);
    this.containersVersion++;
    setAdd(this.containersByState, rec.state, rec.id);
    this.containerLabels.add(rec.id, rec.config.labels);
    this.containersBySandbox.get(rec.sandboxId)?.add(rec.id);
  }

  removeContainer(rec: ContainerRecord): void {
    this.containers.delete(rec.id);
    this.containersVersion++;
    setDelete(this.containersByState, rec.state, rec.id);
    this.containerLabels.remove(rec.id, rec.config.labels);
    this.containersBySandbox.get(rec.sandboxId)?.delete(rec.id);
    this.releaseContainerName(rec.name);
  }

  setContainerState(rec: ContainerRecord, state: ContainerState): void {
    if (rec.state === state) return;
    setDelete(this.containersByState, rec.state, rec.id);
    rec.state = state;
    setAdd(this.containersByState, state, rec.id);
    rec.listEntry = undefined;
    this.containersVersion++;
  }

  /** Containers of one sandbox, in creation order. */
  containersOf(sandboxId: string): ContainerRecord[] {
    const ids = this.containersBySandbox.get(sandboxId);
    const out: ContainerRecord[] = [];
    if (ids) for (const id of ids) out.push(this.containers.get(id)!);
    return out;
  }

  countContainers(state?: ContainerState): number {
    return state === undefined ? this.containers.size : (this.containersByState.get(state)?.size ?? 0);
  }

  countSandboxes(state?: PodSandboxState): number {
    return state === undefined ? this.sandboxes.size : (this.sandboxesByState.get(state)?.size ?? 0);
  }

  /**
   * Containers matching every given criterion (exact ids: resolve prefixes
   * first). Iterates the smallest candidate set only.
   */
  queryContainers(q: ContainerQuery): ContainerRecord[] {
    const sets: ReadonlySet<string>[] = [];
    if (q.id !== undefined) {
      const rec = this.containers.get(q.id);
      sets.push(rec ? new Set([rec.id]) : EMPTY);
    }
    if (q.sandboxId !== undefined) sets.push(this.containersBySandbox.get(q.sandboxId) ?? EMPTY);
    if (q.state !== undefined) sets.push(this.containersByState.get(q.state) ?? EMPTY);
    const byLabel = q.labels ? this.containerLabels.narrowest(q.labels) : undefined;
    if (byLabel) sets.push(byLabel);
    const out: ContainerRecord[] = [];
    const match = (c: ContainerRecord) =>
      (q.sandboxId === undefined || c.sandboxId === q.sandboxId) &&
      (q.state === undefined || c.state === q.state) &&
      (q.labels === undefined || matchesLabels(c.config.labels, q.labels));
    if (sets.length === 0) {
      for (const c of this.containers.values()) out.push(c);
      return out;
    }
    for (const id of smallest(sets)) {
      const c = this.containers.get(id)!;
      if (match(c)) out.push(c);
    }
    return out;
  }

  querySandboxes(q: SandboxQuery): SandboxRecord[] {
    const sets: ReadonlySet<string>[] = [];
    if (q.id !== undefined) {
      const rec = this.sandboxes.get(q.id);
      sets.push(rec ? new Set([rec.id]) : EMPTY);
    }
    if (q.state !== undefined) sets.push(this.sandboxesByState.get(q.state) ?? EMPTY);
    const byLabel = q.labels ? this.sandboxLabels.narrowest(q.labels) : undefined;
    if (byLabel) sets.push(byLabel);
    const out: SandboxRecord[] = [];
    if (sets.length === 0) {
      for (const s of this.sandboxes.values()) out.push(s);
      return out;
    }
    for (const id of smallest(sets)) {
      const s = this.sandboxes.get(id)!;
      if ((q.state === undefined || s.state === q.state) && (q.labels === undefined || matchesLabels(s.config.labels, q.labels))) {
        out.push(s);
      }
    }
    return out;
  }
}

function smallest(sets: ReadonlySet<string>[]): ReadonlySet<string> {
  let best = sets[0];
  for (const s of sets) if (s.size < best.size) best = s;
  return best;
}

function reserve(names: Map<string, string>, name: string, id: string): string | undefined {
  const owner = names.get(name);
  if (owner !== undefined && owner !== id) return owner;
  names.set(name, id);
  return undefined;
}

function setAdd<K>(m: Map<K, Set<string>>, k: K, id: string): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(id);
}

function setDelete<K>(m: Map<K, Set<string>>, k: K, id: string): void {
  m.get(k)?.delete(id);
}

export { ContainerState, PodSandboxState };
